/* ibsnmpd: AgentX subagent serving InfiniBand MIBs.
 * main(): command line, logging, start-up order, the event loop, signals. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibsnmpd/agent_direct.h"
#include "ibsnmpd/agent_mib.h"
#include "ibsnmpd/area.h"
#include "ibsnmpd/child.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/loop.h"
#include "ibsnmpd/mad_device.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/mkeys.h"
#include "ibsnmpd/netsnmp_compat.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/state_file.h"

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

static bool stopping(void)
{
	return stop_requested;
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
	/* e.g. stopped during start-up: MADs are in flight (see mad_engine_close) */
	mad_engine_close();
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

static void reload_config(void)
{
	char ca[IBSNMPD_CA_NAME_MAX], fabric[IBSNMPD_FABRIC_NAME_MAX];
	int port = ibsnmpd_cfg.port_num;
	struct ibsnmpd_config before = ibsnmpd_cfg;
	void *areas_before = areas_config_save();
	const char *why;

	snprintf(ca, sizeof(ca), "%s", ibsnmpd_cfg.ca_name);
	snprintf(fabric, sizeof(fabric), "%s", ibsnmpd_cfg.fabric_name);
	snmp_log(LOG_INFO, "SIGHUP: re-reading the configuration\n");
	config_reset_error_count();
	update_config();
	why = config_error_count() ? NULL : areas_config_refused(ibsnmpd_areas);
	if (config_error_count() || why) {
		if (why)
			snmp_log(LOG_ERR, "%s; keeping the previous settings\n", why);
		else
			snmp_log(LOG_ERR, "configuration has %u error(s); keeping the previous "
				 "settings\n", config_error_count());
		ibsnmpd_cfg = before;
		areas_config_restore(areas_before);
		free(areas_before);
		return;
	}
	free(areas_before);
	if (strcmp(ca, ibsnmpd_cfg.ca_name) || port != ibsnmpd_cfg.port_num)
		snmp_log(LOG_WARNING, "a change of 'ca' or 'port' takes effect at the next start\n");
	if (strcmp(fabric, ibsnmpd_cfg.fabric_name)) {
		snmp_log(LOG_WARNING, "a change of 'fabricName' takes effect at the next start\n");
		snprintf(ibsnmpd_cfg.fabric_name, sizeof(ibsnmpd_cfg.fabric_name), "%s", fabric);
	}
	mad_engine_set_limits(ibsnmpd_cfg.mad_timeout_ms, ibsnmpd_cfg.mad_retries,
			      ibsnmpd_cfg.mad_max_outstanding, ibsnmpd_cfg.mad_max_per_destination);
	mad_engine_set_timeout_max(ibsnmpd_cfg.mad_timeout_max_ms);
	{
		char keys_why[300];

		if (mkeys_load(ibsnmpd_cfg.mkey_file, keys_why, sizeof(keys_why)))
			snmp_log(LOG_ERR, "%s; the M_Keys in force stay\n", keys_why);
	}
	mad_engine_set_mkey(mkeys_default());
	notify_apply_config();
	loop_set_stall(ibsnmpd_cfg.loop_watchdog_s);
	areas_reload();
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
	compat_agentx_quick_sessions();
	init_agent(APP_NAME);
	if (direct)
		agent_direct_init_modules();
	config_register_tokens();
	areas_configure(ibsnmpd_areas);
	notify_init(!direct); /* before the session opens */
	init_snmp(APP_NAME); /* reads ibsnmpd.conf, connects to the master */
	/* A first failed connection has been logged (by net-snmp); the retries
	 * every agentxPingInterval are not: an outage of snmpd is one line when
	 * it starts ("disconnected us", "failed to respond to ping") and one
	 * when it ends ("subagent connected"). */
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_NO_CONNECTION_WARNINGS,
			       1);
	if (config_error_count())
		fatal(1, "stopping: the configuration has errors (see the lines above)");
	if ((why = areas_config_refused(ibsnmpd_areas)))
		fatal(1, why);
	{
		char keys_why[300];

		if (mkeys_load(ibsnmpd_cfg.mkey_file, keys_why, sizeof(keys_why)))
			fatal(1, keys_why);
	}
	if (direct && (why = agent_direct_listen(&code)))
		fatal(code, why);
	notify_apply_config();
}

/* The MAD engine's figures for the agent's own MIB (the SNMP edge does not
 * use the MAD layer: main.c puts them together). */
static void mad_figures(struct agent_mib_mads *out)
{
	struct mad_engine_stats st;

	mad_engine_get_stats(&st);
	*out = (struct agent_mib_mads){
		.sent = st.sent, .answered = st.answered, .timeouts = st.timeouts,
		.dropped = st.dropped, .in_flight = st.in_flight, .smps_refused = st.smps_refused,
		.mkey_violations_caused = st.mkey_violations_caused,
		.smp_access = mad_engine_smp_access(),
	};
}

/* The areas (areas.c), their MIBs and then the core's statistics (whose
 * cache table lists the areas' groups). The first, the local node, is
 * filled before anything is registered. */
static void start_areas(const struct mad_local_port *local)
{
	struct area_env env = {.local = local, .stopping = stopping};

	if (areas_start(ibsnmpd_areas, &env))
		fatal(3, "cannot start (see the lines above)");
	if (stop_requested)
		fatal(0, "stopped during start-up");
	if (areas_register_mib() || agent_mib_register(mad_figures))
		fatal(3, "cannot register the MIB handlers");
	areas_started();
}

static void stop_all(void)
{
	loop_stop();
	mad_engine_stop_calling_back();
	agent_mib_unregister();
	areas_unregister_mib();
	areas_stop();
	state_file_stop();
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
	static struct mad_local_port local;
	struct mad_transport wire;

	/* A snapshot's arrays (megabytes on a big fabric) are mapped apart and
	 * unmapped when the snapshot is freed: glibc's own threshold rises to
	 * the largest block once freed, and then keeps them in the heap, where
	 * a freed snapshot stays resident until the next trim (cache.c). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
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
	mad_engine_set_timeout_max(ibsnmpd_cfg.mad_timeout_max_ms);
	mad_engine_set_mkey(mkeys_default());
	if (mad_device_open(ibsnmpd_cfg.ca_name, ibsnmpd_cfg.port_num, &local, &wire, err,
			    sizeof(err), &exit_code) < 0)
		fatal(exit_code, err);
	if (mad_engine_attach(&wire))
		fatal(3, "cannot start the MAD engine: out of memory");
	mad_engine_set_local_lid((unsigned)local.lid);
	snmp_log(LOG_INFO, APP_NAME " %s: using %s port %d (LID %d, SM LID %d)\n",
		 IBSNMPD_VERSION, local.ca_name, local.port_num, local.lid, local.sm_lid);

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);

	loop_start(ibsnmpd_cfg.loop_watchdog_s);
	start_areas(&local);

	snmp_log(LOG_INFO, APP_NAME " started\n");
	report_ready(0);
	loop_ready();

	while (!stop_requested) {
		loop_pass();
		if (reload_requested) {
			reload_requested = 0;
			reload_config();
		}
	}

	snmp_log(LOG_INFO, APP_NAME " stopping\n");
	/* gone first: from here on nothing is served */
	if (pid_file_written)
		unlink(pid_file_written);
	pid_file_written = NULL;
	stop_all();
	snmp_shutdown(APP_NAME);
	return 0;
}
