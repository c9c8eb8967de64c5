/* basic_auth_users (prom_internal.h): a password checked against its
 * bcrypt hash by libcrypt's crypt_r, on a thread of its own.
 *
 * A bcrypt of cost 10 takes some 70 ms, of cost 14 over a second: done on
 * the main thread, every scrape (and every wrong password someone tries)
 * would hold the SNMP requests that long. So the listener suspends the
 * request, a job goes to the checker thread, and the answer comes back
 * through an eventfd in the main loop's select set. A password that
 * passed is remembered (a keyed hash of the user and the password, never
 * the password) for PROM_AUTH_REMEMBER_S, as the exporter-toolkit caches
 * them, so a scraper costs one bcrypt an hour, not one a scrape. At most
 * PROM_AUTH_JOBS checks wait at once; more get 503. No net-snmp call is
 * made on the checker thread. */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "prom_internal.h"

#define PROM_AUTH_REMEMBER 64
#define PROM_AUTH_REMEMBER_S 3600

struct job {
	bool used, done, ok;
	void *token;
	char password[256];
	char hash[61];
	bool user_known;
	uint8_t mac[32];
};

struct remembered {
	uint8_t mac[32];
	time_t until;
};

struct prom_auth {
	struct prom_web_user users[PROM_WEB_USERS_MAX];
	size_t n_users;
	uint8_t key[32];                  /* of the remembered MACs: this process's own */
	struct remembered remembered[PROM_AUTH_REMEMBER];
	size_t next_remembered;
	struct job jobs[PROM_AUTH_JOBS];  /* guarded by lock */
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_t thread;
	bool quit;
	int done_fd;
};

/* Equal, in a time that depends on the length only */
static bool same(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

static void *checker(void *arg)
{
	struct prom_auth *a = arg;
	struct crypt_data *cd = calloc(1, sizeof(*cd));

	pthread_mutex_lock(&a->lock);
	while (!a->quit) {
		struct job *j = NULL;

		for (size_t i = 0; i < PROM_AUTH_JOBS && !j; i++)
			if (a->jobs[i].used && !a->jobs[i].done)
				j = &a->jobs[i];
		if (!j) {
			pthread_cond_wait(&a->work, &a->lock);
			continue;
		}
		{
			char password[sizeof(j->password)], hash[sizeof(j->hash)];
			const char *out = NULL;
			bool ok;

			memcpy(password, j->password, sizeof(password));
			memcpy(hash, j->hash, sizeof(hash));
			pthread_mutex_unlock(&a->lock);
			if (cd) {
				memset(cd, 0, sizeof(*cd));
				out = crypt_r(password, hash, cd);
			}
			ok = out && strlen(out) == 60 && same(out, hash, 60);
			explicit_bzero(password, sizeof(password));
			if (cd)
				explicit_bzero(cd, sizeof(*cd));
			pthread_mutex_lock(&a->lock);
			j->ok = ok && j->user_known;
			j->done = true;
			explicit_bzero(j->password, sizeof(j->password));
		}
		{
			uint64_t one = 1;

			if (write(a->done_fd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
				/* the main loop reads it: nothing else to do */
			}
		}
	}
	pthread_mutex_unlock(&a->lock);
	free(cd);
	return NULL;
}

struct prom_auth *prom_auth_new(const struct prom_web_user *users, size_t n_users)
{
	struct prom_auth *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	memcpy(a->users, users, n_users * sizeof(*users));
	a->n_users = n_users;
	a->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->done_fd < 0 || gnutls_rnd(GNUTLS_RND_KEY, a->key, sizeof(a->key)) ||
	    pthread_mutex_init(&a->lock, NULL)) {
		if (a->done_fd >= 0)
			close(a->done_fd);
		free(a);
		return NULL;
	}
	pthread_cond_init(&a->work, NULL);
	if (pthread_create(&a->thread, NULL, checker, a)) {
		pthread_cond_destroy(&a->work);
		pthread_mutex_destroy(&a->lock);
		close(a->done_fd);
		free(a);
		return NULL;
	}
	return a;
}

int prom_auth_fd(const struct prom_auth *a)
{
	return a->done_fd;
}

static const struct prom_web_user *find_user(const struct prom_auth *a, const char *name)
{
	for (size_t i = 0; i < a->n_users; i++)
		if (!strcmp(a->users[i].name, name))
			return &a->users[i];
	return NULL;
}

/* The keyed hash of "user\0password": what is remembered of a login */
static int login_mac(const struct prom_auth *a, const char *user, const char *password,
		     uint8_t mac[32])
{
	size_t u = strlen(user), p = strlen(password);
	char *both = malloc(u + 1 + p);
	int rc;

	if (!both)
		return -1;
	memcpy(both, user, u + 1);
	memcpy(both + u + 1, password, p);
	rc = gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof(a->key), both, u + 1 + p, mac);
	explicit_bzero(both, u + 1 + p);
	free(both);
	return rc ? -1 : 0;
}

enum prom_auth_result prom_auth_check(struct prom_auth *a, const char *user, const char *password,
				      void *token)
{
	const struct prom_web_user *u = find_user(a, user);
	time_t now = time(NULL);
	uint8_t mac[32];
	struct job *j = NULL;

	if (strlen(password) >= sizeof(a->jobs[0].password))
		return PROM_AUTH_FAILED; /* no bcrypt takes more than 72 octets */
	if (u && !login_mac(a, user, password, mac))
		for (size_t i = 0; i < PROM_AUTH_REMEMBER; i++)
			if (a->remembered[i].until > now && same(a->remembered[i].mac, mac, 32))
				return PROM_AUTH_OK;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < PROM_AUTH_JOBS && !j; i++)
		if (!a->jobs[i].used)
			j = &a->jobs[i];
	if (!j) {
		pthread_mutex_unlock(&a->lock);
		return PROM_AUTH_BUSY;
	}
	memset(j, 0, sizeof(*j));
	j->used = true;
	j->token = token;
	snprintf(j->password, sizeof(j->password), "%s", password);
	/* an unknown user costs the same bcrypt as a known one (the first
	 * user's hash), so that the time does not say who exists */
	snprintf(j->hash, sizeof(j->hash), "%s", u ? u->hash : a->users[0].hash);
	j->user_known = u != NULL;
	if (u)
		memcpy(j->mac, mac, sizeof(mac));
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	return PROM_AUTH_PENDING;
}

void prom_auth_collect(struct prom_auth *a, void (*done)(void *token, bool ok, void *arg),
		       void *arg)
{
	struct job finished[PROM_AUTH_JOBS];
	size_t n = 0;
	uint64_t count;

	if (read(a->done_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < PROM_AUTH_JOBS; i++)
		if (a->jobs[i].used && a->jobs[i].done) {
			finished[n++] = a->jobs[i];
			memset(&a->jobs[i], 0, sizeof(a->jobs[i]));
		}
	pthread_mutex_unlock(&a->lock);
	for (size_t i = 0; i < n; i++) {
		if (finished[i].ok) {
			struct remembered *r = &a->remembered[a->next_remembered++ %
							      PROM_AUTH_REMEMBER];

			memcpy(r->mac, finished[i].mac, sizeof(r->mac));
			r->until = time(NULL) + PROM_AUTH_REMEMBER_S;
		}
		done(finished[i].token, finished[i].ok, arg);
	}
}

void prom_auth_free(struct prom_auth *a, void (*abandoned)(void *token, void *arg), void *arg)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->quit = true;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL); /* it ends its one bcrypt at most */
	for (size_t i = 0; i < PROM_AUTH_JOBS; i++)
		if (a->jobs[i].used && abandoned)
			abandoned(a->jobs[i].token, arg);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->lock);
	close(a->done_fd);
	explicit_bzero(a, sizeof(*a));
	free(a);
}
