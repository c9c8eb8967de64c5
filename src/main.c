/* ibsnmpd: AgentX subagent serving InfiniBand MIBs.
 * main(): command line, logging, start-up order, the event loop, signals. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibsnmpd/agent_direct.h"
#include "ibsnmpd/agent_mib.h"
#include "ibsnmpd/child.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/dcbx.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/pkey.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/sma.h"
#include "ibsnmpd/trap.h"

#ifndef IBSNMPD_VERSION
#define IBSNMPD_VERSION "0.1.0"
#endif

#define DEFAULT_PING_INTERVAL 5 /* seconds between reconnect attempts */

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " APP_NAME " [OPTIONS]\n"
		"AgentX subagent of snmpd serving InfiniBand MIBs (SMA-MIB, ...).\n\n"
		"  -f            stay in the foreground\n"
		"  -a ADDRESS    serve SNMP on ADDRESS as its own agent (direct mode, as\n"
		"                agentaddress in " APP_NAME ".conf), not as snmpd's subagent\n"
		"  -x ADDRESS    AgentX master address (as snmpd's -x; default %s)\n"
		"  -c FILE       read FILE as the configuration file (instead of " APP_NAME
		".conf\n"
		"                in net-snmp's search path: snmpd -H shows it)\n"
		"  -L[efos...]   logging, as snmpd: -Le stderr, -Lf FILE, -Ls FACILITY, -Lo stdout\n"
		"  -D[TOKENS]    debug output for TOKENS (e.g. -Dibsnmpd:mad,ibsnmpd:cache)\n"
		"  -p FILE       write the process id to FILE\n"
		"  -v            print the version and exit\n"
		"  -h            print this help and exit\n\n"
		"Exit status: 0 stopped by a signal, 1 bad command line or configuration,\n"
		"2 no usable InfiniBand port, 4 umad device not permitted, 3 other start-up error.\n",
		NETSNMP_AGENTX_SOCKET);
}

/* Without -f: fork, and let the parent exit with the child's start-up result,
 * so that "ibsnmpd; echo $?" still tells whether the daemon came up. */
static int ready_fd = -1;

static void report_ready(int status)
{
	unsigned char b = (unsigned char)status;

	if (ready_fd < 0)
		return;
	if (write(ready_fd, &b, 1) < 0)
		perror("ready pipe");
	close(ready_fd);
	ready_fd = -1;
}

static void daemonize_with_status(void)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) < 0) {
		perror("pipe");
		exit(3);
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(3);
	}
	if (pid > 0) {
		unsigned char b = 3;

		close(fds[1]);
		if (read(fds[0], &b, 1) != 1) {
			int st;

			waitpid(pid, &st, 0);
			exit(WIFEXITED(st) ? WEXITSTATUS(st) : 3);
		}
		exit(b);
	}
	close(fds[0]);
	ready_fd = fds[1];
	setsid();
	if (chdir("/") < 0)
		exit(3);
	int devnull = open("/dev/null", O_RDWR);

	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		if (devnull > 2)
			close(devnull);
	}
}

/* The pid file once written, removed on any exit of the daemon. */
static const char *pid_file_written;

static void fatal(int code, const char *msg)
{
	snmp_log(LOG_ERR, "%s\n", msg);
	if (pid_file_written)
		unlink(pid_file_written);
	report_ready(code);
	exit(code);
}

static void write_pid_file(const char *path)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f) {
		snmp_log(LOG_ERR, "cannot write pid file %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
	pid_file_written = path;
}

/* What the daemon runs: the local node's SMA, the subnet's counters (if
 * pmEnable), the partition policy, DCBX (if dcbxEnable and the kernel
 * answers), and the trap sources. */
struct daemon {
	struct mad_local_port local;
	struct sma_node node;
	struct pm_subnet pm;
	bool pm_running;
	struct fabric_area fabric;
	bool fabric_running;
	struct node_area nodes;
	bool nodes_running;
	struct pkey_policy *partitions;
	bool dcbx_running;
	unsigned rediscover_alarm;
	unsigned sm_watch_alarm;
};

/* A new master SM: rediscover, the SM may have changed LIDs and routes;
 * subscribe to traps with its SA. */
static void sm_changed(void *arg, unsigned old_lid, unsigned new_lid)
{
	struct daemon *d = arg;

	snmp_log(LOG_NOTICE, "master SM moved from LID %u to LID %u%s\n", old_lid, new_lid,
		 d->pm_running ? ": rediscovering the subnet" : "");
	if (d->pm_running)
		pm_subnet_rediscover(&d->pm);
	trap_subscriber_sm_changed(new_lid);
}

/* A link changed state somewhere (trap 128): the switch's ports are read
 * again at once; the subnet is rediscovered once a burst of them is over. */
static void rediscover_now(unsigned reg, void *arg)
{
	struct daemon *d = arg;

	(void)reg;
	d->rediscover_alarm = 0;
	pm_subnet_rediscover(&d->pm);
}

static void link_trap_seen(const struct notice *n, const char *via, void *arg)
{
	struct daemon *d = arg;

	(void)via;
	if (n->is_generic && n->trap_number == 144 && d->pm_running)
		pm_subnet_capabilities_changed(&d->pm, n->lid);
	if (!n->is_generic || n->trap_number != 128 || !d->pm_running)
		return;
	if (d->fabric_running)
		fabric_link_trap(&d->fabric, n->lid);
	if (d->rediscover_alarm)
		snmp_alarm_unregister(d->rediscover_alarm);
	d->rediscover_alarm = snmp_alarm_register(2, 0, rediscover_now, d);
}

/* The master SM's LID as the local port last read it, else as umad said. */
static unsigned node_sm_lid(const struct sma_node *node, unsigned fallback)
{
	const struct sma_port_snapshot *s = cache_snapshot(&node->group[CACHE_PORT_INFO]);

	return s && s->mgmt && s->mgmt->pi.sm_lid ? s->mgmt->pi.sm_lid : fallback;
}

static void reload_config(struct daemon *d)
{
	char ca[IBSNMPD_CA_NAME_MAX];
	int port = ibsnmpd_cfg.port_num;
	struct ibsnmpd_config before = ibsnmpd_cfg;

	snprintf(ca, sizeof(ca), "%s", ibsnmpd_cfg.ca_name);
	snmp_log(LOG_INFO, "SIGHUP: re-reading the configuration\n");
	config_reset_error_count();
	update_config();
	if (config_error_count()) {
		snmp_log(LOG_ERR, "configuration has %u error(s); keeping the previous settings\n",
			 config_error_count());
		ibsnmpd_cfg = before;
		return;
	}
	if (strcmp(ca, ibsnmpd_cfg.ca_name) || port != ibsnmpd_cfg.port_num)
		snmp_log(LOG_WARNING, "a change of 'ca' or 'port' takes effect at the next start\n");
	if (before.pm_enabled != ibsnmpd_cfg.pm_enabled) {
		snmp_log(LOG_WARNING, "a change of 'pmEnable' takes effect at the next start\n");
		ibsnmpd_cfg.pm_enabled = before.pm_enabled;
	}
	mad_engine_set_limits(ibsnmpd_cfg.mad_timeout_ms, ibsnmpd_cfg.mad_retries,
			      ibsnmpd_cfg.mad_max_outstanding, ibsnmpd_cfg.mad_max_per_destination);
	notify_apply_config();
	sma_node_apply_config(&d->node);
	if (d->pm_running)
		pm_subnet_apply_config(&d->pm);
	if (d->nodes_running)
		node_area_apply_config(&d->nodes);
	if (d->fabric_running)
		fabric_apply_config(&d->fabric);
	trap_subscriber_apply_config();
	dcbx_apply_config();
}

/* The command line; returns -1 to go on, else the exit status. */
static int parse_command_line(int argc, char **argv, bool *foreground, bool *log_set,
			      const char **pid_file, const char **address)
{
	int c;

	while ((c = getopt(argc, argv, "fa:x:c:L:D::p:vhH")) != -1) {
		switch (c) {
		case 'f':
			*foreground = true;
			break;
		case 'a':
			*address = optarg;
			break;
		case 'x':
			netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET,
					      optarg);
			break;
		case 'c':
			netsnmp_ds_set_string(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_OPTIONALCONFIG,
					      optarg);
			netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
					       NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
			if (access(optarg, R_OK)) {
				fprintf(stderr, APP_NAME ": cannot read configuration file %s: %s\n",
					optarg, strerror(errno));
				return 1;
			}
			break;
		case 'L':
			if (snmp_log_options(optarg, argc, argv) < 0) {
				usage(stderr);
				return 1;
			}
			*log_set = true;
			break;
		case 'D':
			debug_register_tokens(optarg ? optarg : "ibsnmpd");
			snmp_set_do_debugging(1);
			break;
		case 'p':
			*pid_file = optarg;
			break;
		case 'v':
			printf(APP_NAME " %s (net-snmp %s)\n", IBSNMPD_VERSION,
			       netsnmp_get_version());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, APP_NAME ": unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 1;
	}
	return -1;
}

/* AgentX's ping, open and registrations are synchronous: with net-snmp's
 * default (1 s, 5 retries) a hung snmpd would hold the main loop, and with it
 * the MAD sweeps and the trap intake, for 6 s at every ping. Give up on a
 * silent master quickly instead (as keepalived does): the session is closed
 * and opened again when snmpd answers. AgentX sessions carry the version
 * AGENTX_VERSION_1 (192|1; agent/mibgroup/agentx/protocol.h, not installed). */
#define AGENTX_SESSION_VERSION (192 | 1)
#define AGENTX_SESSION_TIMEOUT_US 500000L

static int agentx_session_init(int major, int minor, void *serverarg, void *clientarg)
{
	netsnmp_session *s = serverarg;

	(void)major;
	(void)minor;
	(void)clientarg;
	if (s && s->version == AGENTX_SESSION_VERSION) {
		s->timeout = AGENTX_SESSION_TIMEOUT_US;
		s->retries = 0;
	}
	return 0;
}

/* net-snmp as an AgentX subagent that reconnects by itself when snmpd goes
 * away, or (direct) as the master agent on agentaddress; reads ibsnmpd.conf. */
static void start_agent(bool direct)
{
	const char *why;
	int code;

	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_ROLE, !direct);
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_AGENTX_PING_INTERVAL,
			   DEFAULT_PING_INTERVAL);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_SESSION_INIT,
			       agentx_session_init, NULL);
	init_agent(APP_NAME);
	if (direct)
		agent_direct_init_modules();
	config_register_tokens();
	init_snmp(APP_NAME); /* reads ibsnmpd.conf, connects to the master */
	/* A first failed connection has been logged (by net-snmp); the retries
	 * every agentxPingInterval are not: an outage of snmpd is one line when
	 * it starts ("disconnected us", "failed to respond to ping") and one
	 * when it ends ("subagent connected"). */
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_NO_CONNECTION_WARNINGS,
			       1);
	if (config_error_count())
		fatal(1, "stopping: the configuration has errors (see the lines above)");
	if (direct && (why = agent_direct_listen(&code)))
		fatal(code, why);
	notify_apply_config();
}

/* The local node first, filled before anything is registered: a manager
 * never sees an empty group just because the daemon has only started. */
static void start_local_node(struct daemon *d)
{
	ib_portid_t self;

	mad_portid_local(&self);
	sma_node_init(&d->node, &self);
	d->node.on_sm_change = sm_changed;
	d->node.on_sm_change_arg = d;
	sma_node_start(&d->node);
	while (!stop_requested && !sma_node_start_step(&d->node))
		agent_check_and_process(1);
	if (stop_requested)
		fatal(0, "stopped during start-up");
	if (!cache_snapshot(&d->node.group[CACHE_NODE_INFO]))
		snmp_log(LOG_WARNING, "the first read of the local node failed; serving nothing "
			 "until a refresh succeeds\n");
}

/* The areas that run in the background, and their MIBs. */
static void start_areas(struct daemon *d)
{
	struct cache_group *groups[CACHE_GROUP_COUNT] = {0};

	/* the subnet's counters: discovery and sweeps run in the background;
	 * their tables fill when the first sweep is done */
	memset(&d->pm, 0, sizeof(d->pm));
	if (ibsnmpd_cfg.pm_enabled) {
		if (pm_subnet_start(&d->pm, d->local.ca_name, d->local.port_num))
			fatal(3, "cannot start the subnet's performance sweeps");
		d->pm_running = true;
		groups[CACHE_PM_COUNTERS] = &d->pm.sweep;
		groups[CACHE_PM_SAMPLES] = &d->pm.samples;
	}
	/* every link of the subnet: swept after each discovery */
	if (d->pm_running && ibsnmpd_cfg.fabric_enabled) {
		if (fabric_start(&d->fabric, &d->pm))
			fatal(3, "cannot start the fabric link sweeps");
		d->fabric_running = true;
		groups[CACHE_FABRIC_PORTS] = &d->fabric.group;
	}
	/* every node as an SNMP device: a context each, from the sweeps above */
	if (d->pm_running) {
		if (node_area_start(&d->nodes, &d->pm, &d->fabric, &d->node))
			fatal(3, "cannot start the node contexts");
		d->nodes_running = true;
	}
	for (int i = 0; i < CACHE_SMA_COUNT; i++)
		groups[i] = &d->node.group[i];
	/* the partition policy: its member ports are found through the PM
	 * subsystem's discovery */
	d->partitions = pkey_policy_start(d->pm_running ? &d->pm : NULL);
	if (!d->partitions)
		fatal(3, "cannot start the partition policy: out of memory");
	groups[CACHE_PARTITION_STATUS] = pkey_policy_status_group(d->partitions);
	/* DCBX of the host's Ethernet ports: kernel dcbnl, independent of the fabric */
	d->dcbx_running = ibsnmpd_cfg.dcbx_enabled && !dcbx_start();
	if (d->dcbx_running)
		groups[CACHE_DCBX] = dcbx_cache_group();
	if (sma_mib_register(&d->node) || agent_mib_register(groups, CACHE_GROUP_COUNT) ||
	    (d->pm_running && pm_mib_register(&d->pm)) ||
	    (d->fabric_running && fabric_mib_register(&d->fabric)) ||
	    (d->nodes_running && node_mib_register(&d->nodes)) ||
	    pkey_mib_register(d->partitions) ||
	    (d->dcbx_running && dcbx_mib_register()))
		fatal(3, "cannot register the MIB handlers");
}

/* Traps: every source feeds the observers; after registering, since
 * notifications need the AgentX session. */
/* Every 2 s the SM that traps come from is asked whether it is master (one
 * SMInfo SMP); while it is gone or not master (it died, a standby takes
 * over, it restarts) the local PortInfo is read as often, whose MasterSMLID
 * names a new master on another node (sm_changed). Traps sent after a new
 * SM is master are then lost for seconds, not for a PortInfo lifetime or a
 * trapResubscribeInterval. */
#define SM_WATCH_INTERVAL_S 2

static void watch_master_sm(unsigned reg, void *arg)
{
	struct daemon *d = arg;
	struct cache_group *port_info = &d->node.group[CACHE_PORT_INFO];

	(void)reg;
	trap_subscriber_probe_now();
	if (!trap_subscriber_has_master() && !port_info->refreshing)
		cache_group_refresh_now(port_info);
}

static void start_traps(struct daemon *d)
{
	if (trap_observe(link_trap_seen, d) || trap_observe(sma_notify_trap, NULL) ||
	    (d->pm_running && trap_watch_counters(&d->pm.sweep)))
		fatal(3, "cannot watch for traps");
	trap_subscriber_start(node_sm_lid(&d->node, (unsigned)d->local.sm_lid));
	d->sm_watch_alarm = snmp_alarm_register(SM_WATCH_INTERVAL_S, SA_REPEAT, watch_master_sm, d);
}

static void stop_all(struct daemon *d)
{
	mad_engine_stop_receiving();
	if (d->sm_watch_alarm)
		snmp_alarm_unregister(d->sm_watch_alarm);
	trap_subscriber_stop();
	if (d->dcbx_running) {
		dcbx_mib_unregister();
		dcbx_stop();
	}
	pkey_mib_unregister();
	pkey_policy_stop(d->partitions);
	if (d->rediscover_alarm)
		snmp_alarm_unregister(d->rediscover_alarm);
	agent_mib_unregister();
	if (d->nodes_running) {
		node_mib_unregister();
		node_area_stop(&d->nodes);
	}
	if (d->fabric_running) {
		fabric_mib_unregister();
		fabric_stop(&d->fabric);
	}
	if (d->pm_running) {
		pm_mib_unregister();
		pm_subnet_stop(&d->pm);
	}
	sma_mib_unregister();
	sma_node_stop(&d->node);
	notify_stop();
	child_stop_all();
	mad_engine_close();
}

int main(int argc, char **argv)
{
	bool foreground = false, log_set = false;
	const char *pid_file = NULL, *address = NULL;
	bool direct;
	char err[768];
	int exit_code;
	static struct daemon d; /* large; lives as long as the process */

	exit_code = parse_command_line(argc, argv, &foreground, &log_set, &pid_file, &address);
	if (exit_code >= 0)
		return exit_code;
	direct = agent_direct_wanted(address);
	/* The agent needs no MIB files; loading the default list only prints
	 * "Cannot find module" noise on hosts without the IETF modules. */
	setenv("MIBS", "", 0);
	if (!log_set) {
		if (foreground)
			snmp_enable_stderrlog();
		else
			snmp_enable_syslog_ident(APP_NAME, LOG_DAEMON);
	}
	if (!foreground)
		daemonize_with_status();
	start_agent(direct);
	/* Before anything is registered: while the later registrations wait
	 * for snmpd's answers, net-snmp already serves the MIBs registered
	 * before them, and a daemon that answers has its pid file. */
	write_pid_file(pid_file);

	mad_engine_set_limits(ibsnmpd_cfg.mad_timeout_ms, ibsnmpd_cfg.mad_retries,
			      ibsnmpd_cfg.mad_max_outstanding, ibsnmpd_cfg.mad_max_per_destination);
	if (mad_engine_open(ibsnmpd_cfg.ca_name, ibsnmpd_cfg.port_num, &d.local, err, sizeof(err),
			    &exit_code) < 0)
		fatal(exit_code, err);
	snmp_log(LOG_INFO, APP_NAME " %s: using %s port %d (LID %d, SM LID %d)\n",
		 IBSNMPD_VERSION, d.local.ca_name, d.local.port_num, d.local.lid, d.local.sm_lid);

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);

	start_local_node(&d);
	start_areas(&d);
	start_traps(&d);

	snmp_log(LOG_INFO, APP_NAME " started\n");
	report_ready(0);

	while (!stop_requested) {
		agent_check_and_process(1);
		if (reload_requested) {
			reload_requested = 0;
			reload_config(&d);
		}
	}

	snmp_log(LOG_INFO, APP_NAME " stopping\n");
	/* gone first: from here on nothing is served */
	if (pid_file_written)
		unlink(pid_file_written);
	pid_file_written = NULL;
	stop_all(&d);
	snmp_shutdown(APP_NAME);
	return 0;
}
