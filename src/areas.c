/* The areas the daemon runs, in start order: each may use those before it
 * (area_find). Adding an area: its folder, and a line here. */
#include <stddef.h>

#include "ibsnmpd/alarm.h"
#include "ibsnmpd/area.h"
#include "ibsnmpd/dcbx.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/pkey.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/prom.h"
#include "ibsnmpd/route.h"
#include "ibsnmpd/slurm.h"
#include "ibsnmpd/sma.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/trap.h"
#include "ibsnmpd/vitals.h"

const struct area_def *const ibsnmpd_areas[] = {
	&sma_area_def,      /* the local node, filled before anything is served */
	&trap_area_def,     /* traps in: the next ones observe them */
	&topology_area_def, /* the subnet's discovery: the next ones follow it */
	&pm_area_def,
	&fabric_area_def,
	&vitals_area_def,   /* the hardware: the node contexts serve it */
	&node_area_def,     /* after the sweeps it serves */
	&pkey_area_def,
	&dcbx_area_def,
	&route_area_def,    /* the routing checks: after the sweeps whose load it adds to */
	&slurm_area_def,    /* Slurm's topology.conf: follows the link table */
	&alarm_area_def,    /* follows what the areas before it find wrong */
	&prom_area_def,     /* last: it reads the snapshots of those before */
	NULL,
};
