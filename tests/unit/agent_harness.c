/* The in-process agent (agent_harness.h). */
#include <stdio.h>
#include <string.h>

#include "agent_harness.h"

/* agent/mibgroup/utilities/iquery.c (libnetsnmpagent): net-snmp installs no
 * header for it. A session on the agent's internal callback transport. */
netsnmp_session *netsnmp_iquery_community_session(char *community, int version);

static netsnmp_session *session;

void harness_start(void)
{
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_ROLE, 0); /* master */
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	setenv("MIBS", "", 1);
	if (getenv("HARNESS_DEBUG")) { /* e.g. HARNESS_DEBUG=snmp_agent,callback */
		snmp_enable_stderrlog();
		debug_register_tokens(getenv("HARNESS_DEBUG"));
		snmp_set_do_debugging(1);
	} else {
		snmp_disable_log();
	}
	init_agent("ibsnmpd-test");
	init_snmp("ibsnmpd-test");
	/* no init_master_agent(): no port is opened, only the callback transport */
	session = netsnmp_iquery_community_session((char *)"public", SNMP_VERSION_2c);
}

void harness_stop(void)
{
	if (session)
		snmp_close(session);
	session = NULL;
	snmp_shutdown("ibsnmpd-test");
}

netsnmp_pdu *harness_request(int command, netsnmp_variable_list *vars)
{
	return harness_request_in(NULL, command, vars);
}

netsnmp_pdu *harness_request_in(const char *context, int command, netsnmp_variable_list *vars)
{
	netsnmp_pdu *pdu = snmp_pdu_create(command), *response = NULL;

	int status;

	pdu->variables = vars;
	if (context) {
		pdu->contextName = strdup(context);
		pdu->contextNameLen = strlen(context);
	}
	/* tests ask as the agent itself: no access control to configure */
	pdu->flags |= UCD_MSG_FLAG_ALWAYS_IN_VIEW;
	status = snmp_synch_response(session, pdu, &response);
	if (status != STAT_SUCCESS || !response) {
		fprintf(stderr, "harness: no response to a request (status %d: %s)\n", status,
			snmp_api_errstring(session->s_snmp_errno));
		abort();
	}
	return response;
}

static netsnmp_variable_list *one(int command, const oid *name, size_t len, netsnmp_pdu **pdu)
{
	netsnmp_variable_list *vars = NULL;

	snmp_varlist_add_variable(&vars, name, len, ASN_NULL, NULL, 0);
	*pdu = harness_request(command, vars);
	return (*pdu)->variables;
}

netsnmp_variable_list *harness_get(const oid *name, size_t len, netsnmp_pdu **pdu)
{
	return one(SNMP_MSG_GET, name, len, pdu);
}

netsnmp_variable_list *harness_getnext(const oid *name, size_t len, netsnmp_pdu **pdu)
{
	return one(SNMP_MSG_GETNEXT, name, len, pdu);
}

void harness_oid_string(const oid *name, size_t len, char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < len && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, ".%lu", (unsigned long)name[i]);
}

size_t harness_walk(const oid *root, size_t len, char names[][128], size_t max)
{
	oid at[MAX_OID_LEN];
	size_t at_len = len, n = 0;

	memcpy(at, root, len * sizeof(oid));
	for (;;) {
		netsnmp_pdu *pdu;
		netsnmp_variable_list *vb = harness_getnext(at, at_len, &pdu);

		if (pdu->errstat != SNMP_ERR_NOERROR || vb->type == SNMP_ENDOFMIBVIEW ||
		    vb->name_length < len || memcmp(vb->name, root, len * sizeof(oid))) {
			snmp_free_pdu(pdu);
			return n;
		}
		if (n < max)
			harness_oid_string(vb->name, vb->name_length, names[n], sizeof(names[n]));
		n++;
		memcpy(at, vb->name, vb->name_length * sizeof(oid));
		at_len = vb->name_length;
		snmp_free_pdu(pdu);
	}
}

void harness_add_int(netsnmp_variable_list **vars, const oid *name, size_t len, long v)
{
	snmp_varlist_add_variable(vars, name, len, ASN_INTEGER, &v, sizeof(v));
}

void harness_add_string(netsnmp_variable_list **vars, const oid *name, size_t len,
			const char *s, size_t n)
{
	snmp_varlist_add_variable(vars, name, len, ASN_OCTET_STR, s, n);
}

int harness_set(netsnmp_variable_list *vars, long *index)
{
	netsnmp_pdu *pdu = harness_request(SNMP_MSG_SET, vars);
	int err = (int)pdu->errstat;

	if (index)
		*index = pdu->errindex;
	snmp_free_pdu(pdu);
	return err;
}
