/* prometheusWebConfig read (prom_internal.h): the file, then the
 * certificate, key and client CA it names, each checked by GnuTLS as the
 * listener will use it, so that a file ibsnmpd would not serve with is
 * refused when it is read (at start, or by a SIGHUP that then keeps the
 * configuration before) and not when a scraper first connects. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "ibsnmpd/file_io.h"
#include "prom_internal.h"

#define WEB_FILE_MAX (1024 * 1024)

void prom_web_free(struct prom_web *w)
{
	if (!w)
		return;
	prom_web_config_free(&w->cfg);
	free(w->cert_pem);
	if (w->key_pem) {
		explicit_bzero(w->key_pem, strlen(w->key_pem));
		free(w->key_pem);
	}
	free(w->ca_pem);
	free(w);
}

bool prom_web_authenticates(const struct prom_web *w)
{
	return w && (w->cfg.n_users ||
		     (w->cfg.tls && w->cfg.client_auth == PROM_CLIENT_REQUIRE_VERIFY));
}

/* A file the web configuration names: relative to the configuration's
 * folder, as the exporter-toolkit reads them */
static int read_named(const char *config_path, const char *what, const char *name, bool secret,
		      char **text, char *why, size_t why_len)
{
	char path[4096], folder[4096];
	struct stat st;
	const char *reason = "";
	size_t len;
	int r;

	if (name[0] == '/') {
		snprintf(path, sizeof(path), "%s", name);
	} else {
		snprintf(folder, sizeof(folder), "%s", config_path);
		snprintf(path, sizeof(path), "%s/%s", dirname(folder), name);
	}
	r = file_read_whole(path, WEB_FILE_MAX, text, &len, &st, &reason);
	if (r) {
		snprintf(why, why_len, "%s %s: %s", what, path, r > 0 ? "no such file" : reason);
		return -1;
	}
	if (secret && file_check_private(&st)) {
		snprintf(why, why_len, "%s %s: mode %04o, owner %u: refused (" FILE_PRIVATE_HINT ")",
			 what, path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		explicit_bzero(*text, len);
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

/* The certificate and key together, the CA, the priorities: as MHD will
 * hand them to GnuTLS */
static int check_tls(struct prom_web *w, char *why, size_t why_len)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = {(unsigned char *)w->cert_pem, (unsigned)strlen(w->cert_pem)},
		       key = {(unsigned char *)w->key_pem, (unsigned)strlen(w->key_pem)};
	gnutls_priority_t prio;
	const char *err_at = NULL;
	int rc;

	if (gnutls_certificate_allocate_credentials(&cred)) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	rc = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(why, why_len, "the certificate and key: %s (PEM, the key not "
			 "encrypted, and the key of that certificate)", gnutls_strerror(rc));
		gnutls_certificate_free_credentials(cred);
		return -1;
	}
	if (w->ca_pem) {
		gnutls_datum_t ca = {(unsigned char *)w->ca_pem, (unsigned)strlen(w->ca_pem)};

		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			snprintf(why, why_len, "the client CA: %s",
				 rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
			gnutls_certificate_free_credentials(cred);
			return -1;
		}
	}
	gnutls_certificate_free_credentials(cred);
	rc = gnutls_priority_init(&prio, w->priorities, &err_at);
	if (rc < 0) {
		snprintf(why, why_len, "GnuTLS refuses the versions, suites or curves (%s, at '%s')",
			 gnutls_strerror(rc), err_at ? err_at : "?");
		return -1;
	}
	gnutls_priority_deinit(prio);
	return 0;
}

time_t prom_web_cert_expiry(const struct prom_web *w)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t pem;
	time_t t = 0;

	if (!w || !w->cert_pem || gnutls_x509_crt_init(&crt))
		return 0;
	pem.data = (unsigned char *)w->cert_pem;
	pem.size = (unsigned)strlen(w->cert_pem);
	if (!gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM))
		t = gnutls_x509_crt_get_expiration_time(crt);
	gnutls_x509_crt_deinit(crt);
	return t == (time_t)-1 ? 0 : t;
}

int prom_web_load(const char *path, struct prom_web **out, char *why, size_t why_len)
{
	struct prom_web *w = calloc(1, sizeof(*w));
	struct stat st;
	gnutls_hash_hd_t digest = NULL;
	char *text = NULL, err[300];
	const char *reason = "";
	size_t len = 0;
	int r;

	*out = NULL;
	if (!w) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	r = file_read_whole(path, WEB_FILE_MAX, &text, &len, &st, &reason);
	if (r) {
		snprintf(why, why_len, "%s", r > 0 ? "no such file" : reason);
		free(w);
		return -1;
	}
	if (prom_web_parse(text, len, &w->cfg, err, sizeof(err))) {
		snprintf(why, why_len, "%s:%s", path, err + (strncmp(err, "line ", 5) ? 0 : 5));
		goto fail;
	}
	/* an inline key makes the file itself a key file */
	if (w->cfg.key && file_check_private(&st)) {
		snprintf(why, why_len, "%s holds a key: mode %04o, owner %u: refused ("
			 FILE_PRIVATE_HINT ")", path, (unsigned)(st.st_mode & 07777),
			 (unsigned)st.st_uid);
		goto fail;
	}
	if (gnutls_hash_init(&digest, GNUTLS_DIG_SHA256)) {
		snprintf(why, why_len, "out of memory");
		goto fail;
	}
	gnutls_hash(digest, text, len);
	if (w->cfg.tls) {
		char extra[sizeof(w->extra_suites)];

		if (w->cfg.cert_file ? read_named(path, "cert_file", w->cfg.cert_file, false,
						  &w->cert_pem, why, why_len)
				     : !(w->cert_pem = strdup(w->cfg.cert)))
			goto fail;
		if (w->cfg.key_file ? read_named(path, "key_file", w->cfg.key_file, true,
						 &w->key_pem, why, why_len)
				    : !(w->key_pem = strdup(w->cfg.key)))
			goto fail;
		if (w->cfg.client_ca_file ? read_named(path, "client_ca_file", w->cfg.client_ca_file,
						       false, &w->ca_pem, why, why_len)
					  : w->cfg.client_ca && !(w->ca_pem = strdup(w->cfg.client_ca)))
			goto fail;
		if (prom_web_priorities(&w->cfg, w->priorities, sizeof(w->priorities), extra,
					sizeof(extra))) {
			snprintf(why, why_len, "too many cipher suites and curves");
			goto fail;
		}
		snprintf(w->extra_suites, sizeof(w->extra_suites), "%s", extra);
		if (check_tls(w, err, sizeof(err))) {
			snprintf(why, why_len, "%s: %s", path, err);
			goto fail;
		}
		gnutls_hash(digest, w->cert_pem, strlen(w->cert_pem));
		gnutls_hash(digest, w->key_pem, strlen(w->key_pem));
		if (w->ca_pem)
			gnutls_hash(digest, w->ca_pem, strlen(w->ca_pem));
	}
	gnutls_hash_deinit(digest, w->digest);
	free(text);
	*out = w;
	return 0;
fail:
	if (digest)
		gnutls_hash_deinit(digest, NULL);
	free(text);
	prom_web_free(w);
	return -1;
}
