/*
 * symbolize_debuginfod.c - debug files fetched by build-id from the
 * debuginfod servers DEBUGINFOD_URLS names, through elfutils' client library
 * (which caches them where DEBUGINFOD_CACHE_PATH says, ~/.cache/debuginfod_client
 * by default, negative answers included).
 *
 * A slow or silent server must not hold analyze hostage: each build-id is
 * asked for once per run, a fetch is cancelled when it has run for the
 * timeout (the client library's progress callback, called at least once a
 * second, is where), and after one timeout or unreachable server no other
 * build-id is asked for in this run. Whatever comes back is only a
 * candidate: the caller checks its build-id before using it, so a server
 * answering garbage costs the download and never a wrong name.
 *
 * The client library is loaded (dlopen) when the first build-id is asked
 * for, not linked: it pulls in libcurl and its TLS, LDAP and Kerberos
 * libraries, whose loading and constructors cost every analyze run CPU time
 * at start-up, servers or not (bench/README.md, "analyze: symbolizing").
 */
#include "symbolize_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#define CLIENT_LIBRARY "libdebuginfod.so.1"

/* The client library's functions, once loaded: the library is the process's,
 * as if it were linked (a callback of it has nothing else to find them by). */
static struct client_api {
	int tried, loaded;
	char problem[200];
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
} api;

/* Load the client library (once): 0, or -1 with api.problem saying why. */
static int load_client_library(void)
{
	if (api.tried)
		return api.loaded ? 0 : -1;
	api.tried = 1;
	void *lib = dlopen(CLIENT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *why = dlerror();
		snprintf(api.problem, sizeof(api.problem), "cannot load %s (%s)", CLIENT_LIBRARY,
			 why != NULL ? why : "not found");
		return -1;
	}
	/* POSIX's way from a symbol to a function pointer: through memcpy. */
	struct {
		const char *name;
		void *slot;
		size_t size;
	} fns[] = {
		{"debuginfod_begin", &api.begin, sizeof(api.begin)},
		{"debuginfod_end", &api.end, sizeof(api.end)},
		{"debuginfod_set_user_data", &api.set_user_data, sizeof(api.set_user_data)},
		{"debuginfod_get_user_data", &api.get_user_data, sizeof(api.get_user_data)},
		{"debuginfod_set_progressfn", &api.set_progressfn, sizeof(api.set_progressfn)},
		{"debuginfod_find_debuginfo", &api.find_debuginfo, sizeof(api.find_debuginfo)},
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(lib, fns[i].name);
		if (f == NULL) {
			snprintf(api.problem, sizeof(api.problem), "%s lacks %s", CLIENT_LIBRARY, fns[i].name);
			return -1;
		}
		memcpy(fns[i].slot, &f, fns[i].size);
	}
	api.loaded = 1;
	return 0;
}

struct answer {
	uint8_t id[64];
	size_t id_len;
	char *path; /* NULL: not found */
};

struct sym_debuginfod {
	debuginfod_client *client;
	double timeout_s;
	sym_progress_fn progress;
	void *progress_ctx;
	int stopped; /* a timeout or an unreachable server: no more queries */
	char stop_reason[160];
	/* the fetch under way */
	const char *what;
	double start;
	int timed_out;
	struct answer *answers;
	size_t nanswers, answers_cap;
	char last_problem[320];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int on_progress(debuginfod_client *c, long done, long total)
{
	struct sym_debuginfod *d = api.get_user_data(c);
	if (now_s() - d->start > d->timeout_s) {
		d->timed_out = 1;
		return 1; /* cancel */
	}
	if (d->progress != NULL)
		d->progress(d->progress_ctx, d->what, done > 0 ? (uint64_t)done : 0,
			    total > 0 ? (uint64_t)total : 0, 0);
	return 0;
}

struct sym_debuginfod *sym_debuginfod_new(double timeout_s, sym_progress_fn progress,
					  void *progress_ctx)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls == NULL || urls[strspn(urls, " \t")] == '\0')
		return NULL;
	struct sym_debuginfod *d = calloc_or_abort(1, sizeof(*d));
	d->timeout_s = timeout_s > 0 ? timeout_s : 30;
	d->progress = progress;
	d->progress_ctx = progress_ctx;
	return d;
}

void sym_debuginfod_free(struct sym_debuginfod *d)
{
	if (d == NULL)
		return;
	if (d->client != NULL)
		api.end(d->client);
	for (size_t i = 0; i < d->nanswers; i++)
		free(d->answers[i].path);
	free(d->answers);
	free(d);
}

const char *sym_debuginfod_problem(const struct sym_debuginfod *d)
{
	return d != NULL ? d->last_problem : "";
}

/* Why a fetch failed, for people ("" when the server simply has no such file). */
static void explain(struct sym_debuginfod *d, long err)
{
	d->last_problem[0] = '\0';
	if (d->timed_out) {
		snprintf(d->stop_reason, sizeof(d->stop_reason), "no answer within %g s", d->timeout_s);
	} else if (err == -ECONNREFUSED || err == -EHOSTUNREACH || err == -ENETUNREACH ||
		   err == -ETIMEDOUT || err == -ECONNRESET) {
		snprintf(d->stop_reason, sizeof(d->stop_reason), "server unreachable (%s)",
			 strerror((int)-err));
	} else {
		if (err != -ENOENT)
			snprintf(d->last_problem, sizeof(d->last_problem), "debuginfod: %s",
				 strerror((int)-err));
		return;
	}
	d->stopped = 1;
	snprintf(d->last_problem, sizeof(d->last_problem),
		 "debuginfod: %s: no more debug info asked for in this run", d->stop_reason);
}

int sym_debuginfod_fetch(void *ctx, const uint8_t *id, size_t len, const char *what, char *out,
			 size_t out_len)
{
	struct sym_debuginfod *d = ctx;
	if (d == NULL || len == 0 || len > 64)
		return -1;
	d->last_problem[0] = '\0';
	for (size_t i = 0; i < d->nanswers; i++) {
		const struct answer *a = &d->answers[i];
		if (a->id_len == len && memcmp(a->id, id, len) == 0) {
			if (a->path == NULL)
				return -1;
			snprintf(out, out_len, "%s", a->path);
			return 0;
		}
	}
	if (d->stopped) {
		snprintf(d->last_problem, sizeof(d->last_problem),
			 "debuginfod not asked (%s earlier in this run)", d->stop_reason);
		return -1;
	}
	if (d->client == NULL && load_client_library() < 0) {
		d->stopped = 1;
		snprintf(d->stop_reason, sizeof(d->stop_reason), "cannot load its client library");
		snprintf(d->last_problem, sizeof(d->last_problem), "debuginfod: %s", api.problem);
		return -1;
	}
	if (d->client == NULL && (d->client = api.begin()) == NULL) {
		d->stopped = 1;
		snprintf(d->stop_reason, sizeof(d->stop_reason), "cannot start its client");
		snprintf(d->last_problem, sizeof(d->last_problem), "debuginfod: cannot start its client");
		return -1;
	}
	api.set_user_data(d->client, d);
	api.set_progressfn(d->client, on_progress);
	d->what = what;
	d->start = now_s();
	d->timed_out = 0;
	char *path = NULL;
	int fd = api.find_debuginfo(d->client, id, (int)len, &path);
	if (d->progress != NULL)
		d->progress(d->progress_ctx, what, 0, 0, 1);
	ALLOC_GROW(d->answers, d->nanswers + 1, d->answers_cap);
	struct answer *a = &d->answers[d->nanswers++];
	memcpy(a->id, id, len);
	a->id_len = len;
	a->path = NULL;
	if (fd < 0) {
		free(path);
		explain(d, fd);
		return -1;
	}
	close(fd);
	a->path = path;
	snprintf(out, out_len, "%s", path);
	return 0;
}
