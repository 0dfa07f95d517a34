/*
 * slurmctld/agora - shows what Agora decided where Slurm admins and users
 * already look: "scontrol show config" (section "Slurmctld Plugstack
 * Plugins Configuration") and agoractl, which reads the same RPC.
 *
 * Enabled with SlurmctldPlugstack=slurmctld/agora.  Each call reads the
 * view file Agora's scheduler writes after its passes
 * (StateSaveLocation/agora_view.json, common/base/agora_view.h) and turns it
 * into key=value pairs:
 *   View=<time of the pass>  Apps=N
 *   Credit[<app>]=credit=C quota=Q usage=U GPU-h rho=R      (per app)
 *   Leases=N  Lease[<job id>]=gpus=G until=<time> state=active|grace
 * Nothing here changes scheduling.
 *
 * Cheap: the file is parsed only when it changed (device, inode, size,
 * mtime and ctime to the nanosecond, as fstat() saw the file parsed), or
 * when PrivateData or StateSaveLocation changed; otherwise the rendered
 * pairs of the last parse are copied.  A debug line counts parses against
 * calls ("parse N of M calls").
 *
 * Injection-proof: app names come from users (an account, a user name,
 * or with AppDefinition=name_prefix the prefix of a job name).  They are
 * printed only sanitised (common/base/agora_sanitize.h): bytes outside
 * [A-Za-z0-9._+@:/-] as \xHH, at most 64 bytes (longer names are cut and
 * end in ~<hash>), so no name can add a line or a key to the output.
 *
 * PrivateData: "scontrol show config" is answered for any user, and in
 * Slurm 22.05 the plugstack hook has no caller identity:
 * _slurm_rpc_dump_conf() -> _fill_ctld_conf() ->
 * slurmctld_plugstack_g_get_config() -> get_config(p) passes no
 * slurm_msg_t, no uid and no thread-local user.  Every caller, root
 * included, therefore gets the same pairs, and with PrivateData they are
 * the ones fit for the least privileged user:
 *   - PrivateData with usage, accounts, users or jobs: no per-app rows
 *     (names, credit, quota, usage, rho); "Apps=N" and a notice
 *     "Credit=hidden: ..." instead.  An app is an account, a user or a
 *     job-name prefix (AppDefinition), so each of these flags covers it.
 *   - PrivateData with jobs: leases without job ids (Lease[#1], ...;
 *     GPUs, end and state stay) and a notice "LeaseJobs=hidden: ...".
 * The caller's own accounts cannot be picked out here for the same reason.
 * root and SlurmUser see everything with agoractl on a host that can read
 * StateSaveLocation (the controller): it reads the file itself.
 *
 * A missing or bad view file gives one pair, View=unavailable: <file>:
 * <error> (with line for JSON errors); malformed entries are left out and
 * counted in ViewSkipped=.  Never an error that stops slurmctld.
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
#include "slurmctld_agora.h"

/* Same name as in Agora's scheduler, which writes the file. */
#define VIEW_FILE "agora_view.json"

const char plugin_name[] = "Agora decisions in scontrol show config";
const char plugin_type[] = "slurmctld/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

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

extern int init(void)
{
	debug("%s: loaded", plugin_type);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	slurm_mutex_lock(&cache_lock);
	cache_clear();
	slurm_mutex_unlock(&cache_lock);
	return SLURM_SUCCESS;
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
static void cache_fill(const char *path, uint16_t priv, int stat_errno,
		       const struct stat *st)
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
		debug("%s: %s (parse %" PRIu64 " of %" PRIu64 " calls)",
		      plugin_type, err.text, n_parses, n_calls);
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
	      plugin_type, path, v.n_apps, v.n_leases, v.n_skipped, n_parses,
	      n_calls);
	agora_view_free(&v);
}

extern void slurmctld_plugstack_p_get_config(config_plugin_params_t *p)
{
	char *path = NULL;
	uint16_t priv = slurm_conf.private_data;
	struct stat st;
	int e = 0;
	size_t i;

	xstrcat(p->name, plugin_type);
	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location, VIEW_FILE);

	slurm_mutex_lock(&cache_lock);
	n_calls++;
	if (stat(path, &st))
		e = errno ? errno : EIO;
	if (!cache.valid || xstrcmp(cache.path, path) ||
	    cache.private != priv || cache.stat_errno != e ||
	    (!e && !agora_view_same_file(&cache.st, &st)))
		cache_fill(path, priv, e, &st);
	for (i = 0; i < cache.n; i++) {
		config_key_pair_t *kp = xmalloc(sizeof(*kp));

		kp->name = xstrdup(cache.names[i]);
		kp->value = xstrdup(cache.values[i]);
		list_append(p->key_pairs, kp);
	}
	slurm_mutex_unlock(&cache_lock);
	xfree(path);
}
