/* The umad device: the local HCA port the daemon reads the fabric through,
 * chosen and opened as the MAD engine's transport (mad_device.c). */
#ifndef IBSNMPD_MAD_DEVICE_H
#define IBSNMPD_MAD_DEVICE_H

#include <stddef.h>

#include "ibsnmpd/mad_engine.h"

/* Resolves and opens the port (ca_name "" / port 0 = first active InfiniBand
 * port, Ethernet ports skipped), registers the MAD agents and starts
 * receiving; *wire is its transport (mad_engine_attach). On failure returns
 * -1, with an operator-facing message in err and an exit code in
 * *exit_code, having released what it took. */
int mad_device_open(const char *ca_name, int port_num, struct mad_local_port *out,
		    struct mad_transport *wire, char *err, size_t errlen, int *exit_code);

#endif
