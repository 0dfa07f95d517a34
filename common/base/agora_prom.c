/*
 * agora_prom.c - Prometheus' text format and agoractl's --json meta block
 * (agora_prom.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_prom.h"

void agora_prom_init(agora_prom_t *p)
{
	memset(p, 0, sizeof(*p));
}

void agora_prom_free(agora_prom_t *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

static void put(agora_prom_t *p, const char *s, size_t n)
{
	if (p->failed)
		return;
	if (p->len + n + 1 > p->size) {
		size_t size = p->size ? p->size : 1024;
		char *b;

		while (p->len + n + 1 > size)
			size *= 2;
		if (!(b = realloc(p->buf, size))) {
			p->failed = true;
			snprintf(p->err, sizeof(p->err), "out of memory");
			return;
		}
		p->buf = b;
		p->size = size;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void puts_(agora_prom_t *p, const char *s)
{
	put(p, s, strlen(s));
}

/* s escaped: \ and newline always, " too in label values. */
static void put_escaped(agora_prom_t *p, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			puts_(p, "\\\\");
		else if (*s == '\n')
			puts_(p, "\\n");
		else if (*s == '"' && quote)
			puts_(p, "\\\"");
		else
			put(p, s, 1);
	}
}

static bool name_ok(const char *s, bool colon)
{
	if (!s || !*s)
		return false;
	for (const char *c = s; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') ||
			     (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			     (colon && *c == ':');

		if (!alpha && (c == s || *c < '0' || *c > '9'))
			return false;
	}
	return true;
}

bool agora_prom_metric_name_ok(const char *name)
{
	return name_ok(name, true);
}

bool agora_prom_label_name_ok(const char *name)
{
	return name_ok(name, false) && strncmp(name, "__", 2);
}

static int bad(agora_prom_t *p, const char *what, const char *name)
{
	if (!p->failed)
		snprintf(p->err, sizeof(p->err), "invalid %s '%.80s'", what,
			 name ? name : "(null)");
	p->failed = true;
	errno = EINVAL;
	return -1;
}

int agora_prom_family(agora_prom_t *p, const char *name, const char *type,
		      const char *help)
{
	static const char *types[] = { "counter", "gauge", "summary",
				       "histogram", "untyped" };
	size_t t = 0;

	if (!agora_prom_metric_name_ok(name))
		return bad(p, "metric name", name);
	while (t < sizeof(types) / sizeof(types[0]) &&
	       strcmp(type ? type : "", types[t]))
		t++;
	if (t == sizeof(types) / sizeof(types[0]))
		return bad(p, "metric type", type);
	puts_(p, "# HELP ");
	puts_(p, name);
	puts_(p, " ");
	put_escaped(p, help ? help : "", false);
	puts_(p, "\n# TYPE ");
	puts_(p, name);
	puts_(p, " ");
	puts_(p, type);
	puts_(p, "\n");
	return p->failed ? -1 : 0;
}

void agora_prom_value(double v, char *buf, size_t size)
{
	if (isnan(v)) {
		snprintf(buf, size, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
	} else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, size, "%.0f", v);
	} else {
		/* the shortest %g that reads back as v */
		for (int prec = 6; prec <= 17; prec++) {
			snprintf(buf, size, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
}

int agora_prom_sample(agora_prom_t *p, const char *name,
		      const char *const *labels, size_t n_labels, double value)
{
	char num[40];

	if (!agora_prom_metric_name_ok(name))
		return bad(p, "metric name", name);
	for (size_t i = 0; i < n_labels; i++)
		if (!agora_prom_label_name_ok(labels[2 * i]))
			return bad(p, "label name", labels[2 * i]);
	puts_(p, name);
	for (size_t i = 0; i < n_labels; i++) {
		puts_(p, i ? "," : "{");
		puts_(p, labels[2 * i]);
		puts_(p, "=\"");
		put_escaped(p, labels[2 * i + 1] ? labels[2 * i + 1] : "",
			    true);
		puts_(p, "\"");
	}
	if (n_labels)
		puts_(p, "}");
	agora_prom_value(value, num, sizeof(num));
	puts_(p, " ");
	puts_(p, num);
	puts_(p, "\n");
	return p->failed ? -1 : 0;
}

int agora_prom_one(agora_prom_t *p, const char *name, const char *type,
		   const char *help, double value)
{
	if (agora_prom_family(p, name, type, help))
		return -1;
	return agora_prom_sample(p, name, NULL, 0, value);
}

static int app_family(agora_prom_t *p, const char *name, const char *help,
		      const agora_view_app_t *apps, size_t n, size_t off,
		      bool rho)
{
	if (agora_prom_family(p, name, "gauge", help))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *l[2] = { "account", apps[i].name };
		double v;

		if (rho && !apps[i].has_rho)
			continue;
		memcpy(&v, (const char *) &apps[i] + off, sizeof(v));
		/* the view keeps GPU-hours; Prometheus' base unit is the
		 * second */
		agora_prom_sample(p, name, l, 1, rho ? v : v * 3600);
	}
	return p->failed ? -1 : 0;
}

int agora_prom_view(agora_prom_t *p, const agora_view_app_t *apps,
		    size_t n_apps, const agora_view_lease_t *leases,
		    size_t n_leases)
{
	static const char *states[2] = { "active", "grace" };
	double n[2] = { 0, 0 }, g[2] = { 0, 0 };

	app_family(p, "agora_account_credit_gpu_seconds",
		   "Credit of the account (GPU-seconds; negative: owes)", apps,
		   n_apps, offsetof(agora_view_app_t, credit), false);
	app_family(p, "agora_account_quota_gpu_seconds",
		   "Quota of the account (GPU-seconds per credit period)", apps,
		   n_apps, offsetof(agora_view_app_t, quota), false);
	app_family(p, "agora_account_usage_gpu_seconds",
		   "Decayed GPU usage of the account (GPU-seconds)", apps,
		   n_apps, offsetof(agora_view_app_t, usage), false);
	app_family(p, "agora_account_rho",
		   "Finish-time fairness rho of the account (1: fair share)",
		   apps, n_apps, offsetof(agora_view_app_t, rho), true);
	for (size_t i = 0; i < n_leases; i++) {
		n[leases[i].grace]++;
		g[leases[i].grace] += (double) leases[i].gpus;
	}
	agora_prom_family(p, "agora_leases", "gauge",
			  "Running jobs holding a GPU lease, by state");
	for (int s = 0; s < 2; s++)
		agora_prom_sample(p, "agora_leases",
				  (const char *[]){ "state", states[s] }, 1,
				  n[s]);
	agora_prom_family(p, "agora_lease_gpus", "gauge",
			  "GPUs held under a lease, by state");
	for (int s = 0; s < 2; s++)
		agora_prom_sample(p, "agora_lease_gpus",
				  (const char *[]){ "state", states[s] }, 1,
				  g[s]);
	return p->failed ? -1 : 0;
}

char *agora_prom_state_path(const char *state_path)
{
	size_t n = strlen(state_path), size = n + sizeof(".prom");
	char *p = malloc(size);

	if (!p)
		return NULL;
	if (n > 5 && !strcmp(state_path + n - 5, ".json"))
		snprintf(p, size, "%.*s.prom", (int) (n - 5), state_path);
	else
		snprintf(p, size, "%s.prom", state_path);
	return p;
}

const char *agora_prom_text(const agora_prom_t *p)
{
	return p->failed ? NULL : p->buf;
}

/* ---- agoractl --json -------------------------------------------------- */

json_object *agora_json_doc(const char *version, int slurm_major,
			    int slurm_minor, int slurm_micro, int argc,
			    const char *const *argv)
{
	json_object *doc = json_object_new_object(), *meta, *plugin, *agora,
		    *slurm, *ver, *cmd;
	char release[48], type[96];

	if (!doc)
		return NULL;
	meta = json_object_new_object();
	plugin = json_object_new_object();
	agora = json_object_new_object();
	slurm = json_object_new_object();
	ver = json_object_new_object();
	cmd = json_object_new_array();
	snprintf(type, sizeof(type), "agoractl/%.64s",
		 argc > 1 && argv[1] ? argv[1] : "");
	json_object_object_add(plugin, "type", json_object_new_string(type));
	json_object_object_add(plugin, "name",
			       json_object_new_string("Agora agoractl"));
	json_object_object_add(meta, "plugin", plugin);
	json_object_object_add(agora, "version",
			       json_object_new_string(version ? version : ""));
	json_object_object_add(meta, "agora", agora);
	json_object_object_add(ver, "major", json_object_new_int(slurm_major));
	json_object_object_add(ver, "micro", json_object_new_int(slurm_micro));
	json_object_object_add(ver, "minor", json_object_new_int(slurm_minor));
	json_object_object_add(slurm, "version", ver);
	snprintf(release, sizeof(release), "%02d.%02d.%d", slurm_major,
		 slurm_minor, slurm_micro);
	json_object_object_add(slurm, "release",
			       json_object_new_string(release));
	json_object_object_add(meta, "Slurm", slurm);
	for (int i = 0; i < argc; i++)
		json_object_array_add(
			cmd, json_object_new_string(argv[i] ? argv[i] : ""));
	json_object_object_add(meta, "command", cmd);
	json_object_object_add(doc, "meta", meta);
	json_object_object_add(doc, "errors", json_object_new_array());
	json_object_object_add(doc, "warnings", json_object_new_array());
	return doc;
}

void agora_json_doc_error(json_object *doc, bool warning, int num,
			  const char *text)
{
	json_object *a, *e;

	if (!doc || !json_object_object_get_ex(
			    doc, warning ? "warnings" : "errors", &a))
		return;
	e = json_object_new_object();
	if (warning) {
		json_object_object_add(
			e, "warning", json_object_new_string(text ? text : ""));
	} else {
		json_object_object_add(
			e, "error", json_object_new_string(text ? text : ""));
		json_object_object_add(e, "error_number",
				       json_object_new_int(num));
	}
	json_object_object_add(e, "source", json_object_new_string("agoractl"));
	json_object_array_add(a, e);
}
