/* The M_Keys in force (mKey, mKeyFile): the key of every SMP the daemon
 * sends. mKey is the subnet's key (opensm's m_key); mKeyFile, opensm's
 * guid2mkey cache (mkey_file.h), gives a port's own where the SM keeps one
 * a port. Secrets: never logged nor served. */
#ifndef IBSNMPD_MKEYS_H
#define IBSNMPD_MKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads mKeyFile (path "" : none), refusing one that others than its owner
 * may read or write (as sshd refuses such keys) or that does not parse:
 * 0, or -1 and why (the keys in force stay). */
int mkeys_load(const char *path, char *why, size_t len);
void mkeys_free(void);
/* The key of an SMP whose destination's port is not known by GUID (the
 * discovery, directed routes): mKey, else the key most ports have in the
 * file; 0: none. */
uint64_t mkeys_default(void);
/* Whether the ports' keys differ (mKeyFile has more than one key): a
 * discovery by directed route with one key would be refused by the ports
 * of the others (libibnetdisc carries one key). */
bool mkeys_per_port(void);
/* A port's own key, by its GUID (a switch's: its node GUID, port 0), from
 * the file; 0: none (the default). The topology hands each LID's to the MAD
 * engine after a discovery (a new mKeyFile: at the next one). */
uint64_t mkeys_of(uint64_t guid);

#endif
