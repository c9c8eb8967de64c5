/* One test per workaround of netsnmp_compat.c, each failing if a net-snmp
 * (or libc, kernel) update changes the behaviour it relies on:
 *   1. net-snmp's transports call the connect() ibsnmpd provides, and a full
 *      Unix-socket backlog ends that connect instead of blocking it;
 *   2. the AgentX session to a real snmpd (started here, on Unix sockets
 *      only) has the short timeout and no retries;
 *   3. a new context's first registration goes through the registration
 *      callbacks for its roots, and compat_context_roots() keeps them quiet;
 *   4. net-snmp's contexts are a list, newest first, and after
 *      compat_default_context_first() the default one heads it and every
 *      context still answers;
 *   5. net-snmp's stream transport (AgentX's) writing to a peer that never
 *      reads: the sendto() ibsnmpd provides refuses a message the socket has
 *      no room for instead of waiting, and every message that went is whole.
 * A hang is a failure too: each part runs under an alarm (the default
 * action of SIGALRM ends the test). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <net-snmp/agent/agent_callbacks.h>

#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp_compat.h"

#include "agent_harness.h"

#define HANG_GUARD_S 20

extern subtree_context_cache *context_subtrees; /* libnetsnmpagent's */
extern netsnmp_session *main_session;          /* likewise: a subagent's AgentX session */

static char dir[] = "/tmp/ibsnmpd-test-compat.XXXXXX";

static void path_in_dir(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* ---- 1. connect() ----------------------------------------------------------------- */

static int listener(const char *path, int backlog)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, backlog), 0);
	return fd;
}

static void netsnmp_connects_through_the_bounded_connect(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[200], spec[220];
	int lfd, fillers[64], n = 0;
	unsigned long before = compat_bounded_connects();
	netsnmp_transport *t;

	(void)state;
	alarm(HANG_GUARD_S);
	path_in_dir(path, sizeof(path), "stuck.sock");
	lfd = listener(path, 0); /* never accepts: a stopped snmpd */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", path);
	/* fill its backlog: non-blocking clients until the kernel says so */
	while (n < 64) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			assert_int_equal(errno, EAGAIN);
			close(fd);
			break;
		}
		fillers[n++] = fd;
	}
	assert_true(n < 64);
	/* net-snmp's own client transport, as the AgentX subagent opens it: it
	 * must come back (bounded) rather than block until the alarm */
	snprintf(spec, sizeof(spec), "unix:%s", path);
	t = netsnmp_tdomain_transport(spec, 0, "unix");
	assert_null(t);
	assert_true(compat_bounded_connects() > before);
	alarm(0);
	for (int i = 0; i < n; i++)
		close(fillers[i]);
	close(lfd);
	unlink(path);
}

/* A socket with a send timeout of its own is left as it is. */
static void a_socket_with_its_own_timeout_is_not_touched(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval own = {3, 0}, after;
	socklen_t len = sizeof(after);
	unsigned long before = compat_bounded_connects();
	char path[200];
	int lfd, fd;

	(void)state;
	path_in_dir(path, sizeof(path), "own.sock");
	lfd = listener(path, 4);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &own, sizeof(own)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(compat_bounded_connects(), before);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &after, &len), 0);
	assert_int_equal(after.tv_sec, 3);
	close(fd);
	close(lfd);
	unlink(path);
}

/* ---- 2. the AgentX session ---------------------------------------------------------- */

static pid_t start_snmpd(const char *agentx, const char *conf_path, const char *pid_path)
{
	char snmp_sock[200], log_path[200];
	FILE *f = fopen(conf_path, "w");
	pid_t pid;

	path_in_dir(snmp_sock, sizeof(snmp_sock), "snmp.sock");
	path_in_dir(log_path, sizeof(log_path), "snmpd.log");
	assert_non_null(f);
	/* Unix sockets only: nothing of the host's network is touched */
	fprintf(f, "agentaddress unix:%s\nmaster agentx\nagentxsocket unix:%s\n"
		"rocommunity public\n", snmp_sock, agentx);
	fclose(f);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("snmpd", "snmpd", "-f", "-C", "-c", conf_path, "-Lf", log_path, "-p",
		       pid_path, "-I", "-smux", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* In a process of its own (this program again, "--subagent SOCKET"): the
 * subagent role is per process. */
static int subagent_session_is_quick(const char *agentx)
{
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_ROLE, 1);
	netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET, agentx);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	snmp_disable_log();
	compat_agentx_quick_sessions();
	init_agent("ibsnmpd-test");
	init_snmp("ibsnmpd-test"); /* connects to the master */
	if (!main_session) {
		fprintf(stderr, "no AgentX session to snmpd\n");
		return 2;
	}
	if (main_session->timeout != COMPAT_AGENTX_TIMEOUT_US || main_session->retries != 0) {
		fprintf(stderr, "the AgentX session has timeout %ld us, %d retries (version %ld)\n",
			main_session->timeout, main_session->retries, main_session->version);
		return 1;
	}
	snmp_shutdown("ibsnmpd-test");
	return 0;
}

static void agentx_sessions_to_snmpd_give_up_quickly(void **state)
{
	char agentx[200], conf[200], pidf[200];
	pid_t snmpd, sub;
	int st = -1;
	struct stat sb;

	(void)state;
	alarm(HANG_GUARD_S);
	path_in_dir(agentx, sizeof(agentx), "agentx.sock");
	path_in_dir(conf, sizeof(conf), "snmpd.conf");
	path_in_dir(pidf, sizeof(pidf), "snmpd.pid");
	snmpd = start_snmpd(agentx, conf, pidf);
	for (int i = 0; i < 100 && stat(agentx, &sb); i++)
		usleep(50000);
	assert_int_equal(stat(agentx, &sb), 0);
	sub = fork();
	assert_true(sub >= 0);
	if (sub == 0) {
		execl("/proc/self/exe", "test_netsnmp_compat", "--subagent", agentx, (char *)NULL);
		_exit(127);
	}
	waitpid(sub, &st, 0);
	kill(snmpd, SIGTERM);
	waitpid(snmpd, NULL, 0);
	alarm(0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- 3. a context's roots ----------------------------------------------------------- */

static unsigned registrations_told;

static int count_registration(int major, int minor, void *server, void *client)
{
	(void)major;
	(void)minor;
	(void)server;
	(void)client;
	registrations_told++;
	return 0;
}

static const struct mib_rows *no_rows(const void *ctx, const void **snap)
{
	(void)ctx;
	*snap = NULL;
	return NULL;
}

static int no_value(const void *row, unsigned column, netsnmp_variable_list *vb, const void *s)
{
	(void)row;
	(void)column;
	(void)vb;
	(void)s;
	return -1;
}

static const oid table_oid[] = {1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 117, 99, 1};

static struct mib_table table_in(const char *context)
{
	return (struct mib_table){.name = "compatTest", .table_oid = table_oid,
				  .table_oid_len = OID_LENGTH(table_oid), .first_column = 1,
				  .last_column = 1, .rows = no_rows, .value = no_value,
				  .context = context};
}

static void a_new_contexts_roots_are_registered_quietly(void **state)
{
	static struct mib_table loud, quiet;
	unsigned told;

	(void)state;
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_REGISTER_OID,
			       count_registration, NULL);
	/* what net-snmp does: the roots 0, 1, 2 of a new context, then the table */
	registrations_told = 0;
	loud = table_in("compat-loud");
	assert_int_equal(mib_table_register(&loud), 0);
	told = registrations_told;
	assert_true(told >= 4);
	/* with the roots made first, quietly: the table alone is told */
	registrations_told = 0;
	compat_context_roots("compat-quiet");
	assert_int_equal(registrations_told, 0);
	quiet = table_in("compat-quiet");
	assert_int_equal(mib_table_register(&quiet), 0);
	assert_int_equal(registrations_told, 1);
	mib_table_unregister(&loud);
	mib_table_unregister(&quiet);
}

/* ---- 4. the default context first --------------------------------------------------- */

static int one_value(const void *row, unsigned column, netsnmp_variable_list *vb, const void *s)
{
	(void)row;
	(void)column;
	(void)s;
	mib_set_int(vb, 7);
	return 0;
}

static const struct mib_rows *one_row(const void *ctx, const void **snap)
{
	static struct mib_row row = {.index = {1}, .index_len = 1};
	static struct mib_rows rows = {.count = 1, .rows = &row};

	(void)ctx;
	*snap = NULL;
	return &rows;
}

static void the_default_context_heads_the_list_and_all_answer(void **state)
{
	static const char *const contexts[] = {"", "compat-a", "compat-b", "compat-c"};
	static struct mib_table tables[4];
	oid name[OID_LENGTH(table_oid) + 3];
	netsnmp_pdu *pdu;

	(void)state;
	memcpy(name, table_oid, sizeof(table_oid));
	name[OID_LENGTH(table_oid)] = 1;
	name[OID_LENGTH(table_oid) + 1] = 1;
	name[OID_LENGTH(table_oid) + 2] = 1;
	for (int i = 0; i < 4; i++) {
		tables[i] = table_in(i ? contexts[i] : NULL);
		tables[i].rows = one_row;
		tables[i].value = one_value;
		assert_int_equal(mib_table_register(&tables[i]), 0);
	}
	/* net-snmp: a list, the newest context first */
	assert_non_null(context_subtrees);
	assert_string_equal(context_subtrees->context_name, "compat-c");
	compat_default_context_first();
	assert_string_equal(context_subtrees->context_name, "");
	for (int i = 0; i < 4; i++) {
		netsnmp_variable_list *vars = NULL;

		snmp_varlist_add_variable(&vars, name, OID_LENGTH(name), ASN_NULL, NULL, 0);
		pdu = harness_request_in(i ? contexts[i] : NULL, SNMP_MSG_GET, vars);
		assert_int_equal(pdu->variables->type, ASN_INTEGER);
		assert_int_equal(*pdu->variables->val.integer, 7);
		snmp_free_pdu(pdu);
	}
	for (int i = 0; i < 4; i++)
		mib_table_unregister(&tables[i]);
}

/* ---- 5. a write to a stream socket never waits ---------------------------------- */

static void a_peer_that_does_not_read_is_not_waited_for(void **state)
{
	char path[200], spec[220], msg[3000], got[sizeof(msg)];
	struct compat_write_stats before, after;
	netsnmp_transport *t;
	int lfd, peer, rc = 0;
	size_t sent = 0, read_back = 0;

	(void)state;
	alarm(HANG_GUARD_S); /* a send that waits ends the test here */
	path_in_dir(path, sizeof(path), "deaf.sock");
	lfd = listener(path, 4);
	snprintf(spec, sizeof(spec), "unix:%s", path);
	t = netsnmp_tdomain_transport(spec, 0, "unix");
	assert_non_null(t);
	peer = accept(lfd, NULL, NULL); /* snmpd, blocked elsewhere: reads nothing */
	assert_true(peer >= 0);
	compat_get_write_stats(&before);
	for (int i = 0; i < 10000; i++) {
		memset(msg, 'a' + i % 26, sizeof(msg));
		rc = t->f_send(t, msg, sizeof(msg), NULL, NULL);
		if (rc < 0)
			break;
		assert_int_equal(rc, sizeof(msg));
		sent++;
	}
	assert_true(rc < 0);
	assert_int_equal(errno, EAGAIN);
	assert_true(sent > 0);
	compat_get_write_stats(&after);
	assert_int_equal(after.refused, before.refused + 1);
	assert_int_equal(after.shut, before.shut);
	/* what went is whole: every message, in order, nothing in part */
	fcntl(peer, F_SETFL, O_NONBLOCK);
	for (size_t k = 0; k < sent; k++) {
		size_t have = 0;

		while (have < sizeof(got)) {
			ssize_t r = read(peer, got + have, sizeof(got) - have);

			assert_true(r > 0);
			have += (size_t)r;
		}
		assert_int_equal(got[0], 'a' + (int)(k % 26));
		assert_int_equal(got[sizeof(got) - 1], 'a' + (int)(k % 26));
		read_back++;
	}
	assert_int_equal(read(peer, got, 1), -1); /* and nothing more */
	assert_int_equal(read_back, sent);
	/* read: it takes messages again */
	assert_int_equal(t->f_send(t, msg, sizeof(msg), NULL, NULL), sizeof(msg));
	alarm(0);
	t->f_close(t);
	netsnmp_transport_free(t);
	close(peer);
	close(lfd);
	unlink(path);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	harness_start();
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	harness_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(netsnmp_connects_through_the_bounded_connect),
		cmocka_unit_test(a_socket_with_its_own_timeout_is_not_touched),
		cmocka_unit_test(agentx_sessions_to_snmpd_give_up_quickly),
		cmocka_unit_test(a_new_contexts_roots_are_registered_quietly),
		cmocka_unit_test(the_default_context_heads_the_list_and_all_answer),
		cmocka_unit_test(a_peer_that_does_not_read_is_not_waited_for),
	};
	if (argc == 3 && !strcmp(argv[1], "--subagent"))
		return subagent_session_is_quick(argv[2]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
