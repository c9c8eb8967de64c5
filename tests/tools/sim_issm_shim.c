/* sim_issm_shim.so: a test-only LD_PRELOAD shim, never used in production.
 *
 * The simulator hands unsolicited requests (SA Reports among them) only to
 * clients marked IsSM (ibsim.c). A client becomes IsSM by opening
 * /dev/infiniband/issm0, but only once its MAD agents are registered (before
 * that, umad2sim dereferences an unset agent when opensm's SMInfo query
 * arrives). ibsnmpd registers the SA class last, so this shim opens issm0
 * right after that registration. On real hardware the HCA delivers Reports
 * to a registered agent without any of this, and opening issm would mark the
 * port as an SM: that is why it lives in tests/.
 *
 * Load it before libumad2sim: LD_PRELOAD="sim_issm_shim.so libumad2sim.so". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/umad.h>

int umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
		  long method_mask[16 / sizeof(long)])
{
	static int (*real)(int, int, int, uint8_t, long *);
	static int issm_fd = -1;
	int id;

	if (!real)
		real = (int (*)(int, int, int, uint8_t, long *))dlsym(RTLD_NEXT, "umad_register");
	if (!real)
		return -1;
	id = real(portid, mgmt_class, mgmt_version, rmpp_version, method_mask);
	if (id >= 0 && mgmt_class == 0x03 && issm_fd < 0) {
		issm_fd = open("/dev/infiniband/issm0", O_RDWR);
		if (issm_fd < 0)
			perror("sim_issm_shim: open issm0");
	}
	return id;
}
