/*
 * agora_prom.h - Prometheus' text exposition format (version 0.0.4) and
 * the meta block of agoractl's --json documents.
 *
 * Pure libc + json-c, no clock, no logging, no global state: the caller
 * gives every value, the module only formats.  Used by agoractl metrics
 * (node_exporter's textfile collector) and agorad's /metrics.
 *
 * Text format rules kept here (prometheus.io/docs/instrumenting/
 * exposition_formats): a family is "# HELP name text" then "# TYPE name
 * counter|gauge|summary|histogram|untyped", then its samples
 * "name{label="value",...} value"; names match [a-zA-Z_:][a-zA-Z0-9_:]*,
 * label names [a-zA-Z_][a-zA-Z0-9_]* (not starting with "__"); in label
 * values \, " and newline are written \\, \" and \n; in HELP text \ and
 * newline are written \\ and \n; values are Go floats: NaN, +Inf, -Inf.
 */
#ifndef AGORA_PROM_H
#define AGORA_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "agora_view.h"

typedef struct agora_prom {
	char *buf; /* NUL-terminated text so far (NULL before any) */
	size_t len, size;
	bool failed;   /* out of memory or a bad name: text incomplete */
	char err[128]; /* the first bad name, "" if none */
} agora_prom_t;

void agora_prom_init(agora_prom_t *p);
void agora_prom_free(agora_prom_t *p);

/* Whether name is a valid metric name / label name. */
bool agora_prom_metric_name_ok(const char *name);
bool agora_prom_label_name_ok(const char *name);

/* Start a family: HELP and TYPE lines.  type: "counter", "gauge",
 * "summary", "histogram" or "untyped".  0, or -1 (bad name or type:
 * p->failed, p->err says which; nothing written). */
int agora_prom_family(agora_prom_t *p, const char *name, const char *type,
		      const char *help);

/* One sample of the family started last (name may add a suffix such as
 * _sum or _count).  labels: n_labels pairs, labels[2i] the name and
 * labels[2i+1] the value (escaped here).  0, or -1 as above. */
int agora_prom_sample(agora_prom_t *p, const char *name,
		      const char *const *labels, size_t n_labels, double value);

/* A family of one unlabelled sample. */
int agora_prom_one(agora_prom_t *p, const char *name, const char *type,
		   const char *help, double value);

/* The per-account gauges of a view's apps, in GPU-seconds (Prometheus'
 * base unit; the view has GPU-hours): agora_account_credit_gpu_seconds,
 * agora_account_quota_gpu_seconds, agora_account_usage_gpu_seconds, and
 * agora_account_rho (apps with a rho only), label account; plus
 * agora_leases and agora_lease_gpus (active and grace, label state). */
int agora_prom_view(agora_prom_t *p, const agora_view_app_t *apps,
		    size_t n_apps, const agora_view_lease_t *leases,
		    size_t n_leases);

/* Where agorad writes its metrics beside its state file: X.json -> X.prom,
 * else X -> X.prom.  malloc()ed; NULL if out of memory. */
char *agora_prom_state_path(const char *state_path);

/* The text (NULL if p->failed or empty). */
const char *agora_prom_text(const agora_prom_t *p);

/* A Go float as Prometheus writes it: integers without a fraction,
 * else %.17g shortened to the fewest digits that read back the same. */
void agora_prom_value(double v, char *buf, size_t size);

/*
 * The top of an agoractl --json document, in the shape of Slurm's
 * `squeue --json` (Slurm 22.05: {"meta": {"plugin": {type, name},
 * "Slurm": {"version": {major, micro, minor}, "release"}}, "errors": [],
 * ...data}; later releases add "warnings" and the command): a new object
 * {"meta": {"plugin": {"type": "agoractl/<command>", "name": "Agora
 * agoractl"}, "agora": {"version": version}, "Slurm": {"version":
 * {"major", "micro", "minor"}, "release": "M.m.u"}, "command": [argv]},
 * "errors": [], "warnings": []}.  The caller adds the data beside them.
 * NULL if out of memory.
 */
json_object *agora_json_doc(const char *version, int slurm_major,
			    int slurm_minor, int slurm_micro, int argc,
			    const char *const *argv);

/* Append {"error": text, "error_number": num} to doc's "errors" (or
 * {"warning": text} to "warnings" when num is 0 and warning is true). */
void agora_json_doc_error(json_object *doc, bool warning, int num,
			  const char *text);

#endif
