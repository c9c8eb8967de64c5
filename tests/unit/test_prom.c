/* The Prometheus area's pure parts (src/prom/): prometheusListen and
 * prometheusAllow as written, who may scrape, the content negotiation, and
 * the text: the same whatever the blocks it is asked in, descriptions made
 * valid label values, OpenMetrics' framing. The text of a whole subnet is
 * a golden list (test_golden.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "ibsnmpd/node_names.h"
#include "ibsnmpd/prom.h"
#include "ibsnmpd/topology.h"
#include "prom/prom_internal.h"

/* ---- addresses ------------------------------------------------------------------- */

static void listen_addresses_parse_as_written(void **state)
{
	static const char *const bad[] = {
		"localhost:9683", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
		"::1:9683", "[::1]9683", "[::1]:", "1.2.3.4:80x", ":80", "[]:80", "1.2.3:80",
		"127.0.0.1:-1", "[127.0.0.1]:80",
	};
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why;

	(void)state;
	assert_int_equal(prom_parse_listen("127.0.0.1:9683", &ss, &len, &why), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9683);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(prom_parse_listen("[::1]:1", &ss, &len, &why), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 1);
	assert_int_equal(prom_parse_listen("0.0.0.0:65535", &ss, &len, &why), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (!prom_parse_listen(bad[i], &ss, &len, &why))
			fail_msg("%s accepted", bad[i]);
		assert_non_null(why);
	}
}

static struct sockaddr_storage addr(const char *text)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':')) {
		ss.ss_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)&ss)->sin6_addr),
				 1);
	} else {
		ss.ss_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr), 1);
	}
	return ss;
}

static bool allowed(const char *who, const struct prom_cidr *allow, size_t n)
{
	struct sockaddr_storage ss = addr(who);

	return prom_addr_allowed((struct sockaddr *)&ss, allow, n);
}

static void address_blocks_say_who_may_scrape(void **state)
{
	static const char *const bad[] = {"", "10.0.0.0/", "10.0.0.0/33", "2001:db8::/129",
					  "10.0.0/8", "10.0.0.0/8x", "/8", "example.org",
					  "10.0.0.0/-1"};
	struct prom_cidr allow[3];
	struct sockaddr_storage any = addr("0.0.0.0");
	const char *why;

	(void)state;
	assert_int_equal(prom_parse_cidr("10.128.0.0/9", &allow[0], &why), 0);
	assert_int_equal(prom_parse_cidr("2001:db8::/32", &allow[1], &why), 0);
	assert_int_equal(prom_parse_cidr("192.0.2.7", &allow[2], &why), 0);
	assert_int_equal(allow[2].bits, 32);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!prom_parse_cidr(bad[i], &allow[2], &why))
			fail_msg("%s accepted", bad[i]);
	assert_int_equal(prom_parse_cidr("192.0.2.7", &allow[2], &why), 0);

	/* no list: loopback only */
	assert_true(allowed("127.0.0.1", NULL, 0));
	assert_true(allowed("127.9.9.9", NULL, 0));
	assert_true(allowed("::1", NULL, 0));
	assert_true(allowed("::ffff:127.0.0.1", NULL, 0));
	assert_false(allowed("10.200.0.1", NULL, 0));
	/* a list is the whole list: loopback only if it says so */
	assert_false(allowed("127.0.0.1", allow, 3));
	/* the blocks, to the bit */
	assert_true(allowed("10.200.0.1", allow, 3));
	assert_true(allowed("10.128.0.0", allow, 3));
	assert_false(allowed("10.127.255.255", allow, 3));
	assert_true(allowed("::ffff:10.200.0.1", allow, 3)); /* IPv4-mapped */
	assert_true(allowed("2001:db8:1::5", allow, 3));
	assert_false(allowed("2001:db9::5", allow, 3));
	assert_true(allowed("192.0.2.7", allow, 3));
	assert_false(allowed("192.0.2.8", allow, 3));
	assert_false(prom_addr_is_loopback((struct sockaddr *)&any));
	assert_int_equal(prom_parse_cidr("0.0.0.0/0", &allow[0], &why), 0);
	assert_true(allowed("203.0.113.1", allow, 1));
	assert_false(allowed("2001:db8::1", allow, 1));
}

static void scrapers_get_the_format_they_ask_for(void **state)
{
	(void)state;
	assert_int_equal(prom_format_for(NULL), PROM_TEXT);
	assert_int_equal(prom_format_for("*/*"), PROM_TEXT);
	assert_int_equal(prom_format_for("text/plain;version=0.0.4"), PROM_TEXT);
	/* Prometheus 2.42's own Accept */
	assert_int_equal(prom_format_for("application/openmetrics-text;version=1.0.0,application/"
					 "openmetrics-text;version=0.0.1;q=0.75,text/plain;"
					 "version=0.0.4;q=0.5,*/*;q=0.1"),
			 PROM_OPENMETRICS);
	assert_non_null(strstr(prom_content_type(PROM_OPENMETRICS), "version=1.0.0"));
	assert_non_null(strstr(prom_content_type(PROM_TEXT), "version=0.0.4"));
}

/* ---- the text ---------------------------------------------------------------------- */

static struct topology *subnet(const char *text)
{
	char err[200];
	struct topology *f = topology_parse(text, strlen(text), NULL, err, sizeof(err));

	if (!f)
		fail_msg("%s", err);
	return (struct topology *)topology_get(f);
}

/* The whole text, asked in blocks of `block` octets. */
static char *render(const struct prom_sources *src, enum prom_format format, size_t block)
{
	struct prom_render r;
	size_t len = 0, cap = 1 << 16, n;
	char *text = malloc(cap);

	assert_int_equal(prom_render_begin(&r, src, format), 0);
	for (;;) {
		if (cap - len < block + 1) {
			cap = 2 * cap + block;
			text = realloc(text, cap);
		}
		n = prom_render_next(&r, text + len, block);
		assert_true(n <= block);
		if (!n)
			break;
		len += n;
	}
	text[len] = '\0';
	prom_render_end(&r);
	return text;
}

static const char two_nodes[] =
	"port 0000000000000001 1 1 0000000000000001 0000000000000010 1\n"
	"node 0000000000000001 2 1 1 sw1 \"spine\" \\ 1\n"
	"port 0000000000000010 1 5 0000000000000011 0000000000000001 1\n"
	"node 0000000000000010 1 1 5 caf\xc3\xa9 \xff\xfe host caf\xc3\n"
	"done 0.01\n";

static void the_text_is_the_same_whatever_the_block_size(void **state)
{
	static const size_t blocks[] = {1, 2, 7, PROM_LINE_MAX - 1, PROM_LINE_MAX,
					PROM_LINE_MAX + 1, 3000};
	struct topology *f = subnet(two_nodes);
	struct prom_sources src = {.version = "1.2.3", .topology = f, .have_traps = true,
				   .mads = {.sent = 10, .answered = 9}};
	char *whole;

	(void)state;
	for (int format = PROM_TEXT; format <= PROM_OPENMETRICS; format++) {
		whole = render(&src, (enum prom_format)format, 1 << 20);
		for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
			char *again = render(&src, (enum prom_format)format, blocks[i]);

			assert_string_equal(whole, again);
			free(again);
		}
		free(whole);
	}
	topology_put(f);
}

static void names_become_valid_label_values(void **state)
{
	struct topology *f = subnet(two_nodes);
	struct prom_sources src = {.topology = f};
	char *text = render(&src, PROM_TEXT, 4096);
	/* a map's names are served as written, in whatever encoding */
	static const char map_text[] = "0x10 \"caf\xc3\xa9 \xff\xfe host caf\xc3\"\n"
				       "0x1 sw1 \\ 1\n";
	char err[100];
	struct node_name_map *m = node_name_map_parse(map_text, sizeof(map_text) - 1, "map", err,
						      sizeof(err));

	(void)state;
	/* quotes and backslashes escaped; a description's octets that are
	 * not printable ASCII are spaces, as infiniband-diags prints them */
	assert_non_null(strstr(text, "node=\"sw1 \\\"spine\\\" \\\\ 1\""));
	assert_non_null(strstr(text, "node=\"caf      host caf \""));
	free(text);
	/* é kept; the stray octets and the character cut at the end each U+FFFD */
	assert_non_null(m);
	assert_int_equal(topology_name_nodes(f, m), 0);
	text = render(&src, PROM_TEXT, 4096);
	assert_non_null(strstr(text, "node=\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd host caf\xef\xbf\xbd\""));
	assert_non_null(strstr(text, "node=\"sw1 \\\\ 1\""));
	free(text);
	node_name_map_free(m);
	topology_put(f);
}

static void both_formats_frame_their_families(void **state)
{
	struct topology *f = subnet(two_nodes);
	struct prom_sources src = {.topology = f, .have_traps = true, .mads = {.sent = 10}};
	char *text = render(&src, PROM_TEXT, 4096), *om = render(&src, PROM_OPENMETRICS, 4096);
	size_t len = strlen(om);

	(void)state;
	/* the text format: TYPE names the samples; info is a gauge */
	assert_non_null(strstr(text, "# TYPE ibsnmpd_mads_sent_total counter\n"
				     "ibsnmpd_mads_sent_total 10\n"));
	assert_non_null(strstr(text, "# TYPE infiniband_node_info gauge\n"));
	assert_null(strstr(text, "# EOF"));
	/* OpenMetrics: TYPE names the family, info is a type, # EOF ends it */
	assert_non_null(strstr(om, "# TYPE ibsnmpd_mads_sent counter\nibsnmpd_mads_sent_total 10\n"));
	assert_non_null(strstr(om, "# TYPE infiniband_node info\ninfiniband_node_info{"));
	assert_true(len > 6 && !strcmp(om + len - 6, "# EOF\n"));
	free(text);
	free(om);
	topology_put(f);
}


/* ---- prometheusWebConfig ---------------------------------------------------------------- */

static const char full_web_config[] =
	"# as node_exporter's\n"
	"---\n"
	"tls_server_config:\n"
	"  cert_file: server.crt   # the server's\n"
	"  key_file: 'server.key'\n"
	"  client_auth_type: \"RequireAndVerifyClientCert\"\n"
	"  client_ca_file: ca.crt\n"
	"  client_allowed_sans:\n"
	"  - prometheus.example.net\n"
	"  - 192.0.2.7\n"
	"  min_version: TLS13\n"
	"  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n"
	"  prefer_server_cipher_suites: false\n"
	"  curve_preferences:\n"
	"    - X25519\n"
	"    - CurveP256\n"
	"\n"
	"http_server_config:\n"
	"  http2: true\n"
	"  headers:\n"
	"    X-Frame-Options: deny\n"
	"    Strict-Transport-Security: max-age=31536000\n"
	"basic_auth_users:\n"
	"  prometheus: $2y$10$8yXbODuuPQwWfG1jG8qd2e3o8.MOgnNa4aEH2gGMEJv52yr7VwAS.\n"
	"  \"ops team\": '$2b$12$kDb3DDV0CpJZvZTY6mQXouYH4OEy0d3JFpuJLjPbVXlnpDqIJO2C6'\n"
	"rate_limit:\n"
	"  interval: 1m30s\n"
	"  burst: 20\n";

static void the_web_configuration_reads_as_exporters_write_it(void **state)
{
	struct prom_web_config c;
	char why[256], prio[512], extra[512];

	(void)state;
	if (prom_web_parse(full_web_config, sizeof(full_web_config) - 1, &c, why, sizeof(why)))
		fail_msg("%s", why);
	assert_true(c.tls);
	assert_string_equal(c.cert_file, "server.crt");
	assert_string_equal(c.key_file, "server.key");
	assert_string_equal(c.client_ca_file, "ca.crt");
	assert_int_equal(c.client_auth, PROM_CLIENT_REQUIRE_VERIFY);
	assert_int_equal(c.n_sans, 2);
	assert_string_equal(c.sans[1], "192.0.2.7");
	assert_int_equal(c.min_version, 13);
	assert_int_equal(c.max_version, 13);
	assert_int_equal(c.n_suites, 2);
	assert_false(c.prefer_server_suites);
	assert_int_equal(c.n_curves, 2);
	assert_string_equal(c.headers[1], "deny");
	assert_string_equal(c.headers[4], "max-age=31536000");
	assert_null(c.headers[0]);
	assert_int_equal(c.n_users, 2);
	assert_string_equal(c.users[1].name, "ops team");
	assert_string_equal(c.users[1].hash,
			    "$2b$12$kDb3DDV0CpJZvZTY6mQXouYH4OEy0d3JFpuJLjPbVXlnpDqIJO2C6");
	assert_true(c.rate_interval_s == 90);
	assert_int_equal(c.rate_burst, 20);
	assert_int_equal(prom_web_priorities(&c, prio, sizeof(prio), extra, sizeof(extra)), 0);
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:-CIPHER-ALL:-MAC-ALL"
			    ":+ECDHE-RSA:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AEAD"
			    ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1");
	/* TLS 1.3's ciphers are on: GnuTLS pairs them with ECDHE-RSA for 1.2 too */
	assert_string_equal(extra, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "
			    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");
	prom_web_config_free(&c);

	/* an empty file, and the defaults: no TLS, TLS 1.2 at least once on */
	assert_int_equal(prom_web_parse("", 0, &c, why, sizeof(why)), 0);
	assert_false(c.tls);
	assert_int_equal(c.n_users, 0);
	assert_int_equal(prom_web_priorities(&c, prio, sizeof(prio), extra, sizeof(extra)), 0);
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL"
			    ":+AES-128-GCM:+CHACHA20-POLY1305:+AES-256-GCM:+AES-128-CCM:+AES-256-CCM"
			    ":+AES-128-CBC:+AES-256-CBC:%SERVER_PRECEDENCE");
	assert_string_equal(extra, "");
	prom_web_config_free(&c);

	/* an inline PEM, as a '|' block */
	{
		static const char inline_pem[] =
			"tls_server_config:\n"
			"  cert: |\n"
			"    -----BEGIN CERTIFICATE-----\n"
			"    MIIB\n"
			"\n"
			"    -----END CERTIFICATE-----\n"
			"  key_file: k.pem\n";

		assert_int_equal(prom_web_parse(inline_pem, sizeof(inline_pem) - 1, &c, why,
						sizeof(why)), 0);
		assert_string_equal(c.cert, "-----BEGIN CERTIFICATE-----\nMIIB\n\n"
				    "-----END CERTIFICATE-----\n");
		prom_web_config_free(&c);
	}
}

static void a_bad_web_configuration_names_its_line(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} bad[] = {
		{"tls_server_conf:\n  cert_file: a\n", "line 1: unknown key 'tls_server_conf'"},
		{"tls_server_config:\n  cert_file: a\n", "line 1: tls_server_config needs"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
		 "line 1: a client CA without"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n"
		 "  client_auth_type: RequireAndVerifyClientCert\n",
		 "line 4: RequireAndVerifyClientCert needs client_ca_file"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS1.2\n",
		 "line 4: 'min_version' takes"},
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites:\n"
		 "    - TLS_RSA_WITH_RC4_128_SHA\n", "line 5: cipher suite 'TLS_RSA_WITH_RC4_128_SHA'"},
		{"basic_auth_users:\n  alice: secret\n", "line 2: the password of 'alice' is not"},
		{"basic_auth_users:\n  alice: $2y$10$a\n  alice: $2y$10$b\n",
		 "line 3: 'alice' is given twice (first on line 2)"},
		{"http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
		 "line 3: X-Frame-Options takes"},
		{"http_server_config:\n  headers:\n    Server: ibsnmpd\n", "line 3: header 'Server'"},
		{"tls_server_config:\n\tcert_file: a\n", "line 2: while scanning for the next token, found character that "
		 "cannot start any token"},
		{"tls_server_config:\n  cert_file: &a x\n", "line 2: '&' starts"},
		{"rate_limit:\n  interval: 1 second\n", "line 2: interval takes"},
		{"  tls_server_config:\n", "line 1: the file's keys must start"},
		{"a: 1\n---\nb: 2\n", "line 2: one YAML document only"},
		{"tls_server_config: *a\n", "line 1: '*' starts"},
		{"x: &a [1]\ny: *a\n", "line 1: '&' starts"},
		{"tls_server_config: !!map {}\n", "line 1: '!' starts"},
		{"tls_server_config: {cert_file: a}\n", "line 1: '{' starts"},
		{"tls_server_config:\n  cert: >\n    x\n", "line 2: '>' starts"},
		{"- a\n", "line 1: the file is a map of keys, not a list"},
		{"rate_limit:\n  interval: [[1s]]\n", "line 2: a list here holds values"},
		{"rate_limit:\n  ? [a]\n  : 1\n", "line 2: a key is a name"},
		{"a:\n b:\n  c:\n   d:\n    e:\n     f:\n      g:\n       h:\n        i: 1\n",
		 "line 9: nested more than 8 deep"},
		{"tls_server_config:\n  cert_file: \"a\\0b\"\n", "line 2: a value with a NUL"},
		{"rate_limit:\n  burst: 1\n   interval: 1s\n", "line 3: mapping values are not allowed"},
		{"tls_server_config:\n  cert_file: \"a\n", "line 2: while scanning a quoted scalar, found unexpected end of stream "
		 "at line 3"},
	};
	struct prom_web_config c;
	char why[256];
	unsigned wrong = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = prom_web_parse(bad[i].text, strlen(bad[i].text), &c, why, sizeof(why));

		if (rc != -1 || strncmp(why, bad[i].why, strlen(bad[i].why))) {
			print_error("%s: got %d '%s', expected '%s'\n", bad[i].text, rc, why,
				    bad[i].why);
			wrong++;
		}
	}
	if (wrong)
		fail_msg("%u of the bad files answered otherwise", wrong);
	assert_int_equal(prom_web_duration("100ms", &(double){0}), 0);
	{
		double s;

		assert_int_equal(prom_web_duration("1h1m1s500ms", &s), 0);
		assert_true(s > 3661.49 && s < 3661.51);
		assert_int_equal(prom_web_duration("1.5s", &s), -1);
		assert_int_equal(prom_web_duration("s", &s), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listen_addresses_parse_as_written),
		cmocka_unit_test(address_blocks_say_who_may_scrape),
		cmocka_unit_test(scrapers_get_the_format_they_ask_for),
		cmocka_unit_test(the_text_is_the_same_whatever_the_block_size),
		cmocka_unit_test(names_become_valid_label_values),
		cmocka_unit_test(both_formats_frame_their_families),
		cmocka_unit_test(the_web_configuration_reads_as_exporters_write_it),
		cmocka_unit_test(a_bad_web_configuration_names_its_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
