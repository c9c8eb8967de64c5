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
 * An IsSM port is asked for SMInfo by the master SM; nobody behind ibsnmpd's
 * port would answer (on hardware the SMA does), and an opensm starting while
 * such a port stays silent waits for it for minutes. So the shim also answers
 * SMInfo, as an SM that is not active, and hides those requests from the
 * daemon.
 *
 * A second IsSM client in ibsim makes a restarting opensm hang before its
 * first sweep (seen every time with opensm 3.3.23). Tests that restart
 * opensm send SIGUSR2 to the daemon first: the shim then gives IsSM up, and
 * takes it again at the next SIGUSR2.
 *
 * Load it before libumad2sim: LD_PRELOAD="sim_issm_shim.so libumad2sim.so". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <signal.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

static uint64_t port_guid;
static int issm_fd = -1;
static volatile sig_atomic_t toggle_requested;

static void on_usr2(int sig)
{
	(void)sig;
	toggle_requested = 1;
}

__attribute__((constructor)) static void shim_init(void)
{
	signal(SIGUSR2, on_usr2);
}

/* In the receive loop, not in the handler: open/close go through umad2sim */
static void toggle_issm(void)
{
	toggle_requested = 0;
	if (issm_fd >= 0) {
		close(issm_fd);
		issm_fd = -1;
		fprintf(stderr, "sim_issm_shim: IsSM given up\n");
	} else {
		issm_fd = open("/dev/infiniband/issm0", O_RDWR);
		fprintf(stderr, "sim_issm_shim: IsSM taken again\n");
	}
}

int umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
		  long method_mask[16 / sizeof(long)])
{
	static int (*real)(int, int, int, uint8_t, long *);
	int id;

	if (!real)
		real = (int (*)(int, int, int, uint8_t, long *))dlsym(RTLD_NEXT, "umad_register");
	if (!real)
		return -1;
	id = real(portid, mgmt_class, mgmt_version, rmpp_version, method_mask);
	if (id >= 0 && mgmt_class == 0x03 && issm_fd < 0) {
		umad_port_t info;

		if (umad_get_port(NULL, 0, &info) == 0) {
			port_guid = be64toh(info.port_guid);
			umad_release_port(&info);
		}
		issm_fd = open("/dev/infiniband/issm0", O_RDWR);
		if (issm_fd < 0)
			perror("sim_issm_shim: open issm0");
	}
	return id;
}

/* An SMInfo Get (LID-routed or directed route) gets a GetResp: not active,
 * priority 0. The directed-route answer keeps the path and sets Direction. */
static int answer_sminfo(int portid, void *umad)
{
	uint8_t *mad = umad_get_mad(umad);
	int mgmt = mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
	uint8_t resp[sizeof(struct ib_user_mad) + 256];
	uint8_t *rmad;

	if ((mgmt != IB_SMI_CLASS && mgmt != IB_SMI_DIRECT_CLASS) ||
	    mad_get_field(mad, 0, IB_MAD_RESPONSE_F) ||
	    mad_get_field(mad, 0, IB_MAD_METHOD_F) != IB_MAD_METHOD_GET ||
	    mad_get_field(mad, 0, IB_MAD_ATTRID_F) != IB_ATTR_SMINFO)
		return 0;
	memcpy(resp, umad, sizeof(resp));
	rmad = umad_get_mad(resp);
	mad_set_field(rmad, 0, IB_MAD_RESPONSE_F, 1); /* GetResp: Get + response bit */
	if (mgmt == IB_SMI_DIRECT_CLASS) {
		mad_set_field(rmad, 0, IB_DRSMP_DIRECTION_F, 1);
		mad_set_field(rmad, 0, IB_DRSMP_STATUS_F, 0);
	} else {
		mad_set_field(rmad, 0, IB_MAD_STATUS_F, 0);
	}
	memset(rmad + IB_SMP_DATA_OFFS, 0, IB_SMP_DATA_SIZE);
	mad_set_field64(rmad + IB_SMP_DATA_OFFS, 0, IB_SMINFO_GUID_F, port_guid);
	mad_set_field(rmad + IB_SMP_DATA_OFFS, 0, IB_SMINFO_STATE_F, 0);
	umad_send(portid, umad_get_mad_addr(umad) ? ((struct ib_user_mad *)umad)->agent_id : 0,
		  resp, 256, 0, 0);
	return 1;
}

int umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
	static int (*real)(int, void *, int *, int);
	int len0 = *length, r;

	if (!real)
		real = (int (*)(int, void *, int *, int))dlsym(RTLD_NEXT, "umad_recv");
	if (!real)
		return -1;
	for (;;) {
		if (toggle_requested)
			toggle_issm();
		*length = len0;
		r = real(portid, umad, length, timeout_ms);
		if (r < 0 || !answer_sminfo(portid, umad))
			return r;
	}
}
