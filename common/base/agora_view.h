/*
 * agora_view.h - the view file Agora's scheduling pass writes
 * (StateSaveLocation/agora_view.json), read back for display by
 * slurmctld/agora ("scontrol show config") and agoractl.
 *
 * Format (JSON object; keys not listed here are ignored, so the writer may
 * add fields):
 *   time    seconds since the epoch of the pass that wrote it
 *   cluster the ClusterName of the writer (optional)
 *   pass    the pass number (optional)
 *   apps    [{name, credit, quota, usage[, rho]}]  per account/app, GPU-h
 *   leases  [{job, gpus, [start,] end, state: "active"|"grace"
 *            [, requeue_at]}]
 * This module owns the format: agora_view_format()/agora_view_save()
 * write it (site_factor/agora's pass), agora_view_parse()/_load() read it
 * (the same pass after a restart, slurmctld/agora, agoractl).
 * An app or lease entry with a missing or mistyped field is left out and
 * counted (agora_view_t.n_skipped, the first one described); a file that
 * is not JSON, or whose top level is not an object, is an error.
 *
 * Names are kept only in sanitised form (agora_sanitize.h): nothing read
 * from the file can add lines or keys to what is rendered.
 */
#ifndef AGORA_VIEW_H
#define AGORA_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "agora_err.h"
#include "agora_sanitize.h"

/* Largest view file read (bytes); a bigger one is an error. */
#define AGORA_VIEW_MAX_BYTES (64L << 20)

typedef struct agora_view_app {
	char name[AGORA_NAME_SIZE]; /* sanitised */
	double credit, quota, usage, rho;
	bool has_rho;
} agora_view_app_t;

typedef struct agora_view_lease {
	int64_t job;
	int64_t gpus;
	int64_t start; /* 0 if the file did not say */
	int64_t end;
	int64_t requeue_at; /* grace only; 0 if the file did not say */
	bool grace;
} agora_view_lease_t;

typedef struct agora_view {
	int64_t time;
	int64_t pass;
	char cluster[AGORA_NAME_SIZE]; /* sanitised; "" if absent */
	agora_view_app_t *apps;
	size_t n_apps;
	agora_view_lease_t *leases;
	size_t n_leases;
	size_t n_skipped;  /* malformed entries left out */
	char skipped[160]; /* the first one: "apps[3]: name: not a string" */
} agora_view_t;

/*
 * Parse len bytes of text as the view file called name (for messages).
 * On success fill *v (agora_view_free() it) and return 0; on error return
 * -1 with errno = EINVAL (or ENOMEM), err = "NAME:LINE: why" or
 * "NAME: why", and *v empty.
 */
int agora_view_parse(const char *text, size_t len, const char *name,
		     agora_view_t *v, agora_err_t *err);

/*
 * Open, read and parse the file at path.  *st (if not NULL) receives the
 * fstat() of the very file read, so that a caller can tell later whether
 * the file changed (agora_view_same_file()).  Errors as agora_view_parse(),
 * plus "PATH: strerror" with errno of open/read, and EFBIG beyond
 * AGORA_VIEW_MAX_BYTES.
 */
int agora_view_load(const char *path, agora_view_t *v, struct stat *st,
		    agora_err_t *err);

/* True if a and b describe the same unchanged file (device, inode, size,
 * modification and change time to the nanosecond). */
bool agora_view_same_file(const struct stat *a, const struct stat *b);

void agora_view_free(agora_view_t *v);

/*
 * The JSON text of v (malloc'ed; the caller frees it), NULL/ENOMEM.
 * Names are written as v holds them (sanitised when v came from a parse).
 */
char *agora_view_format(const agora_view_t *v);

/*
 * Write v to path with agora_file_write_atomic() (mode 0600, fsynced,
 * the previous file kept as path.prev).  0, or -1 with errno and err set.
 */
int agora_view_save(const char *path, const agora_view_t *v, agora_err_t *err);

/* What agora_view_render() leaves out; why_* say why, in the output. */
typedef struct agora_view_hide {
	const char *apps_why; /* not NULL: no per-app rows, this notice */
	const char *jobs_why; /* not NULL: no lease job ids, this notice */
} agora_view_hide_t;

typedef void (*agora_view_emit_f)(void *arg, const char *key,
				  const char *value);
typedef void (*agora_view_time_f)(int64_t t, char *buf, size_t size);

/*
 * Turn a view into key/value pairs, in this order:
 *   View=<time>   Apps=N
 *   Credit[<name>]=credit=C quota=Q usage=U GPU-h[ rho=R]   (per app)
 *     or, hidden: Credit=hidden: <apps_why>
 *   Leases=N
 *   Lease[<job id>]=gpus=G until=<time> state=active|grace  (per lease)
 *     or, job ids hidden: LeaseJobs=hidden: <jobs_why>, then
 *     Lease[#<n>]=... numbered 1..N
 *   ViewSkipped=<n> malformed entries left out (first: ...)  (if any)
 * Keys and values hold no control characters, '=' only as shown, and
 * names only in sanitised form.  fmt_time formats a time (NULL: seconds).
 */
void agora_view_render(const agora_view_t *v, const agora_view_hide_t *hide,
		       agora_view_time_f fmt_time, agora_view_emit_f emit,
		       void *arg);

#endif
