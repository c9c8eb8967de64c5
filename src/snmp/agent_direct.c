/* Direct mode: net-snmp's agent library as a master agent. Access control,
 * users and trap sinks are net-snmp's own configuration tokens (rocommunity,
 * rouser, createUser, com2sec/group/view/access, trap2sink, trapsess), read
 * from ibsnmpd.conf (an includeFile of the site's snmpd.conf pieces works);
 * nothing of it is written here. net-snmp decides the role when the agent
 * library starts, before it reads the files: they are looked at for an
 * agentaddress line first. */
#include "ibsnmpd/netsnmp.h"

#include <net-snmp/agent/agent_callbacks.h>
#include <net-snmp/library/vacm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/agent_direct.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/file_io.h"

#define CONFIG_FILE_MAX (1024 * 1024)

/* net-snmp MIB modules (libnetsnmpmibs) a master agent needs; Debian's
 * libsnmp-dev installs no header for them. */
void init_vacm_vars(void);
void init_vacm_context(void);
void init_usmUser(void);
void init_usmStats(void);
void init_snmpEngine(void);
void init_snmpMPDStats(void);
void init_system_mib(void);
void init_sysORTable(void);
/* NOTIFICATION-LOG-MIB (RFC 3014), net-snmp's notification_log.c */
void init_notification_log(void);
void log_notification(netsnmp_pdu *pdu, netsnmp_transport *transport);

/* Every notification the agent sends (net-snmp calls this after its sinks)
 * goes to nlmLogTable, as snmpd logs what it sends and forwards. */
static int log_sent(int major, int minor, void *pdu, void *arg)
{
	(void)major;
	(void)minor;
	(void)arg;
	if (pdu)
		log_notification(pdu, NULL);
	return SNMP_ERR_NOERROR;
}

static bool file_has_address(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	const char *why;
	bool found;

	if (file_read_whole(path, CONFIG_FILE_MAX, &text, &len, &st, &why))
		return false; /* missing or unreadable: net-snmp says so when it reads it */
	found = config_text_has_token(text, len, "agentaddress");
	free(text);
	return found;
}

/* Each of a list of paths (sep-separated), with suffix appended. */
static bool any_has_address(const char *list, char sep, const char *suffix)
{
	char path[4096];
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, sep);
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n && snprintf(path, sizeof(path), "%.*s%s", (int)n, p, suffix) <
				 (int)sizeof(path) &&
		    file_has_address(path))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

bool agent_direct_wanted(const char *cli_address)
{
	const char *files =
		netsnmp_ds_get_string(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_OPTIONALCONFIG);

	if (cli_address) {
		netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_PORTS,
				      cli_address);
		return true;
	}
	if (files) /* -c FILE: that file only */
		return any_has_address(files, ',', "");
	return any_has_address(get_configuration_directory(), ':', "/" APP_NAME ".conf") ||
	       any_has_address(get_configuration_directory(), ':', "/" APP_NAME ".local.conf");
}

void agent_direct_init_modules(void)
{
	/* not a SMUX master (snmpd -I -smux): its port is snmpd's */
	static char no_smux[] = "-smux";

	add_to_init_list(no_smux);
	/* net-snmp logs every request's "Connection from" where it has TCP
	 * wrappers; a daemon polled every few seconds does not want that in its
	 * log (dontLogTCPWrappersConnects no turns it back on) */
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID,
			       NETSNMP_DS_AGENT_DONT_LOG_TCPWRAPPERS_CONNECTS, 1);
	/* access control and SNMPv3 users, the engine, and the default
	 * context's system group and sysORTable, as snmpd has them */
	init_vacm_vars();
	init_vacm_context();
	init_usmUser();
	init_usmStats();
	init_snmpEngine();
	init_snmpMPDStats();
	init_system_mib();
	init_sysORTable();
	/* what it sends, logged in NOTIFICATION-LOG-MIB's nlmLogTable (default
	 * context; net-snmp's limits: the last 1000, for 24 hours) */
	init_notification_log();
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_SEND_TRAP2, log_sent, NULL);
}

const char *agent_direct_listen(int *code)
{
	static char why[512];
	const char *ports = netsnmp_ds_get_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_PORTS);

	*code = 1;
	/* no access entry: net-snmp would answer nobody; the point is that
	 * nobody forgot it on a network-facing port */
	vacm_scanAccessInit();
	if (!vacm_scanAccessNext())
		return "direct mode (agentaddress) without access control: refusing to start; add "
		       "rocommunity/rouser (or com2sec, group, view and access) lines to "
		       APP_NAME ".conf";
	if (init_master_agent()) {
		*code = 3;
		snprintf(why, sizeof(why), "direct mode: cannot listen on %s (see above)",
			 ports ? ports : "udp:161");
		return why;
	}
	snmp_log(LOG_INFO, "direct mode: serving SNMP on %s\n", ports ? ports : "udp:161");
	return NULL;
}
