/* Between the vitals' two sweeps (vitals_inventory.c, vitals_readings.c):
 * the one way to read a node's register, and the inventory's group. */
#ifndef IBSNMPD_VITALS_INTERNAL_H
#define IBSNMPD_VITALS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibsnmpd/vitals.h"

/* status: VITALS_REG_STATUS_* (0: reg holds it), or -1: no answer */
typedef void (*vitals_reg_done_fn)(void *ctx, int status, const uint8_t *reg, size_t len);

/* Reads register reg_id of the node at lid, by AccessRegisterGMP (gmp) or
 * class 0x0A's AccessRegister; req: its index fields (req_len octets). -1:
 * not sent (done is not called). */
int vitals_read_register(unsigned lid, bool gmp, unsigned reg_id, const uint8_t *req,
			 size_t req_len, vitals_reg_done_fn done, void *ctx);
/* Whether the node's inventory found register r missing. */
bool vitals_missing(const struct vitals_inv_node *n, enum vitals_reg_bit r);

/* The inventory group's refresh and its snapshot's release. */
void vitals_inventory_start(struct cache_group *g);
void vitals_inventory_snapshot_free(void *p);
/* The departed nodes' inventories, forgotten. */
void vitals_departed_free(struct vitals_area *a);
/* The departed kept at most (a storm of hosts down is a few thousand) */
#define VITALS_DEPARTED_MAX 65536
/* Node guid is read whole at the next readings (it is new, or back, or its
 * inventory was just read). */
void vitals_read_whole(struct vitals_area *a, uint64_t guid);

#endif
