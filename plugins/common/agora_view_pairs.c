/*
 * agora_view_pairs.c - Agora's view file (StateSaveLocation/agora_view.json,
 * common/base/agora_view.h) as key=value pairs for "scontrol show config"
 * and agoractl; see agora_view_pairs.h for the format, the cache and
 * PrivateData.  Slurmctld only: compiled into slurmctld/agora (22.05,
 * SlurmctldPlugstack) and the select/cons_tres wrapper (24.11, its
 * SELECT_CONFIG_INFO answer), doc/design.md "Slurm releases".
 */
#include "config.h"
#include "agora_compat.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/parse_time.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "agora_view.h"
#include "agora_view_pairs.h"

/* Same name as in Agora's scheduler, which writes the file. */
#define VIEW_FILE "agora_view.json"

/* PrivateData flags that hide per-app rows, and lease job ids. */
#define HIDE_APPS_FLAGS                                                        \
	(PRIVATE_DATA_USAGE | PRIVATE_DATA_ACCOUNTS | PRIVATE_DATA_USERS |     \
	 PRIVATE_DATA_JOBS)
#define HIDE_JOBS_FLAGS PRIVATE_DATA_JOBS

/*
 * The rendered pairs of the last parse, and what they were made from.
 * get_config() runs in RPC threads (serialised by the plugstack's own lock
 * today; this lock does not rely on it).
 */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool valid;
	char *path;       /* view file */
	uint16_t private; /* PrivateData it was rendered for */
	int stat_errno;   /* 0: st is the file parsed */
	struct stat st;
	char **names, **values;
	size_t n, size;
} cache;
static uint64_t n_calls, n_parses;

static void cache_clear(void)
{
	size_t i;

	for (i = 0; i < cache.n; i++) {
		xfree(cache.names[i]);
		xfree(cache.values[i]);
	}
	xfree(cache.names);
	xfree(cache.values);
	xfree(cache.path);
	memset(&cache, 0, sizeof(cache));
}

static void cache_add(void *arg, const char *key, const char *value)
{
	(void) arg;
	if (cache.n == cache.size) {
		cache.size = cache.size ? 2 * cache.size : 16;
		xrecalloc(cache.names, cache.size, sizeof(char *));
		xrecalloc(cache.values, cache.size, sizeof(char *));
	}
	cache.names[cache.n] = xstrdup(key);
	cache.values[cache.n] = xstrdup(value);
	cache.n++;
}

static void fmt_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t) t;

	slurm_make_time_str(&tt, buf, (int) size);
}

/* "PrivateData=accounts,jobs" for the flags of f that are set. */
static void private_names(uint16_t f, char *buf, size_t size)
{
	static const struct {
		uint16_t bit;
		const char *name;
	} names[] = { { PRIVATE_DATA_ACCOUNTS, "accounts" },
		      { PRIVATE_DATA_JOBS, "jobs" },
		      { PRIVATE_DATA_USAGE, "usage" },
		      { PRIVATE_DATA_USERS, "users" } };
	size_t i, len;

	snprintf(buf, size, "PrivateData=");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(f & names[i].bit))
			continue;
		len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s",
			 buf[len - 1] == '=' ? "" : ",", names[i].name);
	}
}

/* Parse the view file and render it into the cache (cache_lock held). */
static void cache_fill(const char *who, const char *path, uint16_t priv,
		       int stat_errno, const struct stat *st)
{
	char apps_why[384], jobs_why[160], flags[64];
	agora_view_hide_t hide = { NULL, NULL };
	agora_err_t err = { { 0 } };
	agora_view_t v;
	struct stat fst;

	cache_clear();
	cache.valid = true;
	cache.path = xstrdup(path);
	cache.private = priv;
	cache.stat_errno = stat_errno;
	if (stat_errno) {
		/* nothing to parse: "no such file" until Agora writes it */
		char *msg = xstrdup_printf("unavailable: %s: %s", path,
					   strerror(stat_errno));

		cache_add(NULL, "View", msg);
		xfree(msg);
		return;
	}
	cache.st = *st;
	n_parses++;
	memset(&fst, 0, sizeof(fst));
	if (agora_view_load(path, &v, &fst, &err)) {
		char *msg = xstrdup_printf("unavailable: %s", err.text);

		cache_add(NULL, "View", msg);
		xfree(msg);
		if (fst.st_ino)
			cache.st = fst;
		debug("%s: %s (parse %" PRIu64 " of %" PRIu64 " calls)", who,
		      err.text, n_parses, n_calls);
		return;
	}
	cache.st = fst;
	if (priv & HIDE_APPS_FLAGS) {
		private_names(priv & HIDE_APPS_FLAGS, flags, sizeof(flags));
		snprintf(
			apps_why, sizeof(apps_why),
			"%s: per-app credit, quota and usage are not shown to every user (scontrol show config does not tell this plugin who asks); root or SlurmUser: agoractl on the controller",
			flags);
		hide.apps_why = apps_why;
	}
	if (priv & HIDE_JOBS_FLAGS) {
		private_names(priv & HIDE_JOBS_FLAGS, flags, sizeof(flags));
		snprintf(jobs_why, sizeof(jobs_why),
			 "%s: leases are numbered, not named by job id", flags);
		hide.jobs_why = jobs_why;
	}
	agora_view_render(&v, &hide, fmt_time, cache_add, NULL);
	debug("%s: parsed %s: %zu apps, %zu leases, %zu skipped (parse %" PRIu64
	      " of %" PRIu64 " calls)",
	      who, path, v.n_apps, v.n_leases, v.n_skipped, n_parses, n_calls);
	agora_view_free(&v);
}

extern void agora_view_pairs_append(const char *who, List key_pairs)
{
	char *path = NULL;
	uint16_t priv = slurm_conf.private_data;
	struct stat st;
	int e = 0;
	size_t i;

	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location, VIEW_FILE);

	pthread_mutex_lock(&cache_lock);
	n_calls++;
	if (stat(path, &st))
		e = errno ? errno : EIO;
	if (!cache.valid || xstrcmp(cache.path, path) ||
	    cache.private != priv || cache.stat_errno != e ||
	    (!e && !agora_view_same_file(&cache.st, &st)))
		cache_fill(who, path, priv, e, &st);
	for (i = 0; i < cache.n; i++) {
		config_key_pair_t *kp = xmalloc(sizeof(*kp));

		kp->name = xstrdup(cache.names[i]);
		kp->value = xstrdup(cache.values[i]);
		list_append(key_pairs, kp);
	}
	pthread_mutex_unlock(&cache_lock);
	xfree(path);
}

extern void agora_view_pairs_fini(void)
{
	pthread_mutex_lock(&cache_lock);
	cache_clear();
	pthread_mutex_unlock(&cache_lock);
}
