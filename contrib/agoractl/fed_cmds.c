/*
 * fed_cmds.c - agoractl's federation commands.
 *
 *   agoractl fed [--state FILE]      per cluster: free/total GPUs, pending
 *                                    GPU demand, demand/supply (agorad's
 *                                    last round)
 *   agoractl explain JOBID           the auction's decision for a job:
 *                                    winner, reason, every cluster's bid;
 *                                    a job still held: agorad's last
 *                                    round for it (the state file), e.g.
 *                                    a refusal naming the field
 *   agoractl datasets [--catalog F]  the dataset catalog: size, replicas
 *   agoractl place [--catalog F] [--state FILE] [--max-moves N] [--apply]
 *                                    MAST's slow path: replica moves that
 *                                    balance demand/supply (pol_fed_place),
 *                                    printed as rsync lines; --apply
 *                                    rewrites the catalog
 *
 * agorad's state file defaults to $AGORAD_STATE, else
 * /var/lib/agorad/agorad.json; the catalog to agora.conf's FedCatalog (the
 * agora.conf beside SLURM_CONF).  Jobs are read with the public libslurm
 * API (squeue --federation's call); a job names its dataset in its
 * comment ("dataset=NAME"), or reads its account's default (the catalog's
 * "accounts").
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include "ac_out.h"
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agora_conf.h"
#include "agora_file.h"
#include "agora_json.h"
#include "fed_cmds.h"
#include "pol_fed.h"
#include "pol_fed_hold.h"

#define FED_MAX 64

typedef struct {
	char name[POL_FED_NAME_LEN];
	int up, total, free_gpus, pending;
} fed_cluster_t;

bool agoractl_fed_command(const char *cmd)
{
	return !strcmp(cmd, "fed") || !strcmp(cmd, "explain") ||
	       !strcmp(cmd, "datasets") || !strcmp(cmd, "place");
}

static const char *state_path(const char *opt)
{
	const char *e = getenv("AGORAD_STATE");

	return opt ? opt : (e && *e ? e : "/var/lib/agorad/agorad.json");
}

/* o[k] as an integer in [lo, hi] into *out (left as it is when k is
 * missing); -1 with err "clusters[I].K: ..." on a value of another type or
 * out of range. */
static int int_field(json_object *o, const char *k, size_t i, int64_t lo,
		     int64_t hi, int64_t *out, agora_err_t *err)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, k, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int)) {
		agora_err_set(err, "clusters[%zu].%s: not an integer", i, k);
		return -1;
	}
	errno = 0;
	x = json_object_get_int64(v);
	if (errno || x < lo || x > hi) {
		agora_err_set(err,
			      "clusters[%zu].%s: %s not in [%" PRId64
			      ", %" PRId64 "]",
			      i, k, json_object_get_string(v), lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

/* One cluster of the state file into f; -1 with err naming the field. */
static int read_cluster(json_object *c, size_t i, fed_cluster_t *f,
			agora_err_t *err)
{
	json_object *v;
	int64_t total = 0, free_gpus = 0, pending = 0;

	memset(f, 0, sizeof(*f));
	if (!json_object_is_type(c, json_type_object)) {
		agora_err_set(err, "clusters[%zu]: not an object", i);
		return -1;
	}
	if (!json_object_object_get_ex(c, "name", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    !json_object_get_string_len(v) ||
	    (size_t) json_object_get_string_len(v) >= sizeof(f->name)) {
		agora_err_set(
			err,
			"clusters[%zu].name: missing, not a string or not 1-%zu characters",
			i, sizeof(f->name) - 1);
		return -1;
	}
	snprintf(f->name, sizeof(f->name), "%s", json_object_get_string(v));
	if (json_object_object_get_ex(c, "up", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			agora_err_set(err,
				      "clusters[%zu].up: not true or false", i);
			return -1;
		}
		f->up = json_object_get_boolean(v);
	}
	/* 1e7 GPUs: far above any cluster, far below int overflow */
	if (int_field(c, "gpus_total", i, 0, 10000000, &total, err) ||
	    int_field(c, "gpus_free", i, 0, 10000000, &free_gpus, err) ||
	    int_field(c, "gpus_pending", i, 0, 1000000000, &pending, err))
		return -1;
	f->total = (int) total;
	f->free_gpus = (int) free_gpus;
	f->pending = (int) pending;
	return 0;
}

/* agorad's last round: clusters.  Returns the count, -1 on error (the
 * file, and in it the field, named). */
static int read_state(const char *path, fed_cluster_t *out, long *when)
{
	agora_err_t err = { { 0 } };
	char *text = NULL;
	size_t len = 0, n;
	json_object *root, *arr, *v;
	int64_t t = 0;

	if (agora_file_read_ex(path, 64 << 20, AGORA_FILE_FOLLOW, &text, &len,
			       NULL, &err) < 0) {
		ac_err("%s (is agorad running with -s %s?)\n", err.text, path);
		return -1;
	}
	root = agora_json_parse(text, len, path, &err);
	free(text);
	if (!root) {
		ac_err("%s\n", err.text);
		return -1;
	}
	if (!json_object_object_get_ex(root, "clusters", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		ac_err("%s: not agorad's state file (no \"clusters\" array)\n",
		       path);
		json_object_put(root);
		return -1;
	}
	if ((n = json_object_array_length(arr)) > FED_MAX) {
		ac_err("%s: clusters: %zu, agoractl shows at most %d\n", path,
		       n, FED_MAX);
		json_object_put(root);
		return -1;
	}
	if (json_object_object_get_ex(root, "time", &v)) {
		errno = 0;
		t = json_object_get_int64(v);
		/* up to the year 9999: ctime() and strftime() print it */
		if (!json_object_is_type(v, json_type_int) || errno || t < 0 ||
		    t > 253402300799) {
			ac_err("%s: time: not a time in seconds since 1970\n",
			       path);
			json_object_put(root);
			return -1;
		}
	}
	*when = (long) t;
	for (size_t i = 0; i < n; i++)
		if (read_cluster(json_object_array_get_idx(arr, i), i, &out[i],
				 &err)) {
			ac_err("%s: %s\n", path, err.text);
			json_object_put(root);
			return -1;
		}
	json_object_put(root);
	return (int) n;
}

static int cmd_fed(int argc, char **argv)
{
	fed_cluster_t cl[FED_MAX];
	const char *opt = NULL;
	long when = 0;
	int n;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--state") && i + 1 < argc)
			opt = argv[++i];
		else {
			fprintf(stderr, "usage: agoractl fed [--state FILE]\n");
			return 2;
		}
	if ((n = read_state(state_path(opt), cl, &when)) < 0)
		return 1;
	json_object *ja = json_object_new_array();

	printf("# agorad's round of %s", ctime(&(time_t){ when }));
	printf("%-10s %-5s %10s %10s %12s %14s\n", "CLUSTER", "UP", "FREE_GPUS",
	       "GPUS", "PENDING_GPUS", "DEMAND/SUPPLY");
	for (int c = 0; c < n; c++) {
		/* demand: GPUs in use plus GPUs asked by pending jobs */
		double demand = (cl[c].total - cl[c].free_gpus) + cl[c].pending;

		printf("%-10s %-5s %10d %10d %12d %14.2f\n", cl[c].name,
		       cl[c].up ? "yes" : "no", cl[c].free_gpus, cl[c].total,
		       cl[c].pending, cl[c].total ? demand / cl[c].total : 0);
		{
			json_object *o = json_object_new_object();

			json_object_object_add(o, "name", ac_str(cl[c].name));
			json_object_object_add(
				o, "up", json_object_new_boolean(cl[c].up));
			json_object_object_add(o, "free_gpus",
					       ac_int(cl[c].free_gpus));
			json_object_object_add(o, "gpus", ac_int(cl[c].total));
			json_object_object_add(o, "pending_gpus",
					       ac_int(cl[c].pending));
			json_object_object_add(
				o, "demand_supply",
				ac_num(cl[c].total ? demand / cl[c].total : 0));
			json_object_array_add(ja, o);
		}
	}
	ac_add("time", ac_int(when));
	ac_add("clusters", ja);
	return 0;
}

/* Print text cut at "; " (outside parentheses) and ". Bids:" into
 * lines. */
/* The federation text of a job's AdminComment or SystemComment to
 * explain: the decision, also inside a "pinned to" hold mark (the
 * SystemComment copy lags a pass behind); else an Agora federation text
 * (a hold, a fail-open release); NULL if none. */
static const char *explain_text(const char *c)
{
	pol_fed_mark_t m;

	pol_fed_mark_parse(c, &m);
	if (m.kind == POL_FED_MARK_PINNED &&
	    !strncmp(m.decision, "Agora: fed", 10))
		return m.decision;
	if (m.kind == POL_FED_MARK_NONE || strncmp(c, "Agora: fed", 10))
		return NULL;
	return c;
}

static void print_decision(const char *text)
{
	const char *p = text;
	int depth = 0;

	printf("  ");
	for (; *p; p++) {
		if (!strncmp(p, ". Bids:", 7)) {
			printf("\n  bids:\n   ");
			p += 7;
			while (p[0] == ' ' && p[1] == ' ')
				p++;
			if (*p != ' ')
				p--;
			continue;
		}
		depth += *p == '(' ? 1 : *p == ')' && depth > 0 ? -1 : 0;
		if (*p == ';' && p[1] == ' ' && depth == 0) {
			printf("\n   ");
			p++;
			continue;
		}
		if (*p == ';' && !p[1])
			continue; /* the last bid's separator */
		putchar(*p);
	}
	putchar('\n');
}

/* Job id's decision in agorad's last round (its state file, at *when):
 * malloc'ed, NULL if the file or the job has none. */
static char *state_decision(uint32_t id, long *when)
{
	agora_err_t err = { { 0 } };
	char *text = NULL, *res = NULL;
	size_t len = 0;
	json_object *root, *arr, *v;

	if (agora_file_read_ex(state_path(NULL), 64 << 20, AGORA_FILE_FOLLOW,
			       &text, &len, NULL, &err) < 0)
		return NULL;
	root = json_tokener_parse(text);
	free(text);
	if (!root || !json_object_object_get_ex(root, "jobs", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(root);
		return NULL;
	}
	*when = json_object_object_get_ex(root, "time", &v)
			? json_object_get_int64(v)
			: 0;
	for (size_t i = 0; i < json_object_array_length(arr) && !res; i++) {
		json_object *j = json_object_array_get_idx(arr, i);
		const char *d;

		if (!json_object_object_get_ex(j, "job_id", &v) ||
		    (uint32_t) json_object_get_int64(v) != id ||
		    !json_object_object_get_ex(j, "decision", &v) ||
		    !(d = json_object_get_string(v)) ||
		    strncmp(d, "Agora: fed", 10))
			continue;
		res = strdup(d);
	}
	json_object_put(root);
	return res;
}

/* A job held for the auction shows only its hold mark: agorad's last
 * round says why no cluster won it yet (a refusal names the field).
 * Returns whether it printed one. */
static int explain_round(const slurm_job_info_t *j)
{
	long when = 0;
	char *d = state_decision(j->job_id, &when);

	if (!d)
		return 0;
	printf("JobId=%u origin %s, held for the auction (record of %s); agorad's last round (time %ld):\n",
	       j->job_id, j->fed_origin_str ? j->fed_origin_str : "?",
	       j->cluster ? j->cluster : "?", when);
	print_decision(d + strlen("Agora: "));
	if (ac_json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "job_id", ac_int(j->job_id));
		json_object_object_add(o, "origin", ac_str(j->fed_origin_str));
		json_object_object_add(o, "cluster", ac_str(j->cluster));
		json_object_object_add(o, "held", json_object_new_boolean(1));
		json_object_object_add(o, "round_time", ac_int(when));
		json_object_object_add(o, "decision",
				       ac_str(d + strlen("Agora: ")));
		ac_add("job", o);
	}
	free(d);
	return 1;
}

/* s as a decimal integer in [lo, hi]: digits only (no sign, no space, no
 * suffix); -1 otherwise. */
static int parse_count(const char *s, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out < lo || *out > hi ? -1 : 0;
}

static int cmd_explain(int argc, char **argv)
{
	job_info_msg_t *m = NULL;
	unsigned long v;
	uint32_t id;
	int shown = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: agoractl explain JOBID\n");
		return 2;
	}
	/* a job id: 1 to 2^32 - 3 (NO_VAL - 1; Slurm's largest is lower) */
	if (parse_count(argv[1], 1, 0xfffffffcUL, &v)) {
		fprintf(stderr, "agoractl explain: '%s' is not a job id\n",
			argv[1]);
		return 2;
	}
	id = (uint32_t) v;
	slurm_init(NULL);
	if (slurm_load_job(&m, id, SHOW_ALL | SHOW_FEDERATION)) {
		ac_err("job %u: %s\n", id, slurm_strerror(slurm_get_errno()));
		slurm_fini();
		return 1;
	}
	for (uint32_t i = 0; i < m->record_count && !shown; i++) {
		slurm_job_info_t *j = &m->job_array[i];
		const char *t = explain_text(j->admin_comment);

		pol_fed_mark_t mk;

		if (!t)
			t = explain_text(j->system_comment);
		pol_fed_mark_parse(t, &mk);
		/* held, waiting: agorad's last round may say why */
		if ((!t || mk.kind == POL_FED_MARK_WAITING) &&
		    (shown = explain_round(j)))
			continue;
		if (!t)
			continue;
		/* the record may be the origin's: its active sibling is
		 * where the job runs (or ran) */
		printf("JobId=%u origin %s, sibling on %s (record of %s)\n",
		       j->job_id, j->fed_origin_str ? j->fed_origin_str : "?",
		       j->fed_siblings_active_str &&
				       j->fed_siblings_active_str[0]
			       ? j->fed_siblings_active_str
			       : "none yet",
		       j->cluster ? j->cluster : "?");
		print_decision(t + strlen("Agora: "));
		shown = 1;
		if (ac_json) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "job_id", ac_int(j->job_id));
			json_object_object_add(o, "origin",
					       ac_str(j->fed_origin_str));
			json_object_object_add(
				o, "siblings_active",
				ac_str(j->fed_siblings_active_str));
			json_object_object_add(o, "cluster",
					       ac_str(j->cluster));
			json_object_object_add(o, "decision",
					       ac_str(t + strlen("Agora: ")));
			ac_add("job", o);
		}
	}
	if (!shown)
		ac_add("job", NULL);
	if (!shown)
		printf("JobId=%u: no federation auction decision (not a federated GPU job held for the auction, or FedAuction=no)\n",
		       id);
	slurm_free_job_info_msg(m);
	slurm_fini();
	return 0;
}

/* The catalog path: --catalog, else FedCatalog of agora.conf. */
static char *catalog_path(const char *opt)
{
	const char *sc = getenv("SLURM_CONF");
	agora_conf_t conf;
	agora_err_t err = { { 0 } };
	char *copy, path[4096], *res = NULL;

	if (opt)
		return strdup(opt);
	copy = strdup(sc && *sc ? sc : "/etc/slurm/slurm.conf");
	snprintf(path, sizeof(path), "%s/agora.conf", dirname(copy));
	free(copy);
	agora_conf_defaults(&conf);
	if (agora_conf_parse_file(path, &conf, &err))
		ac_err("%s\n", err.text);
	else if (!conf.fed_catalog)
		ac_err("%s has no FedCatalog (or pass --catalog)\n", path);
	else
		res = strdup(conf.fed_catalog);
	agora_conf_free(&conf);
	return res;
}

static int load_catalog(const char *path, pol_fed_catalog_t *cat)
{
	agora_err_t err = { { 0 } };
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (agora_file_read_ex(path, 64 << 20, AGORA_FILE_FOLLOW, &text, &len,
			       NULL, &err) < 0) {
		ac_err("%s\n", err.text);
		return -1;
	}
	memset(cat, 0, sizeof(*cat));
	rc = pol_fed_catalog_parse(text, path, cat, &err);
	free(text);
	if (rc)
		ac_err("%s\n", err.text);
	return rc;
}

static void replicas(const pol_fed_catalog_t *cat, int d, char *out,
		     size_t size)
{
	size_t l = 0;

	out[0] = '\0';
	for (int s = 0; s < cat->n_sites && s < 64; s++)
		if (cat->datasets[d].where & (1ULL << s))
			l += snprintf(out + l, l < size ? size - l : 0, "%s%s",
				      l ? "," : "", cat->sites[s].name);
}

static int cmd_datasets(int argc, char **argv)
{
	const char *opt = NULL;
	pol_fed_catalog_t cat;
	char *path, where[1024];

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--catalog") && i + 1 < argc)
			opt = argv[++i];
		else {
			fprintf(stderr,
				"usage: agoractl datasets [--catalog FILE]\n");
			return 2;
		}
	if (!(path = catalog_path(opt)))
		return 1;
	if (load_catalog(path, &cat)) {
		free(path);
		return 1;
	}
	json_object *jd = json_object_new_array(),
		    *jacc = json_object_new_array();

	printf("# %s\n%-24s %12s  %s\n", path, "DATASET", "SIZE_GB",
	       "REPLICAS");
	for (int d = 0; d < cat.n_datasets; d++) {
		json_object *o = json_object_new_object(),
			    *r = json_object_new_array();

		for (int s = 0; s < cat.n_sites && s < 64; s++)
			if (cat.datasets[d].where & (1ULL << s))
				json_object_array_add(
					r, ac_str(cat.sites[s].name));
		json_object_object_add(o, "name", ac_str(cat.datasets[d].name));
		json_object_object_add(o, "bytes",
				       ac_num(cat.datasets[d].bytes));
		json_object_object_add(o, "replicas", r);
		json_object_array_add(jd, o);
		replicas(&cat, d, where, sizeof(where));
		printf("%-24s %12.1f  %s\n", cat.datasets[d].name,
		       cat.datasets[d].bytes / 1e9, where);
	}
	if (cat.n_accounts)
		printf("\n%-24s %s\n", "ACCOUNT", "DEFAULT_DATASET");
	for (int a = 0; a < cat.n_accounts; a++) {
		json_object *o = json_object_new_object();

		printf("%-24s %s\n", cat.accounts[a].name,
		       cat.datasets[cat.accounts[a].dataset].name);
		json_object_object_add(o, "name", ac_str(cat.accounts[a].name));
		json_object_object_add(
			o, "dataset",
			ac_str(cat.datasets[cat.accounts[a].dataset].name));
		json_object_array_add(jacc, o);
	}
	ac_add("catalog", ac_str(path));
	ac_add("datasets", jd);
	ac_add("accounts", jacc);
	pol_fed_catalog_free(&cat);
	free(path);
	return 0;
}

/* GPU demand per dataset: pending and running jobs of the federation. */
static int dataset_demand(const pol_fed_catalog_t *cat, double *demand)
{
	job_info_msg_t *m = NULL;

	slurm_init(NULL);
	if (slurm_load_jobs(0, &m, SHOW_ALL | SHOW_FEDERATION)) {
		ac_err("cannot load jobs: %s\n",
		       slurm_strerror(slurm_get_errno()));
		return -1;
	}
	for (uint32_t i = 0; i < m->record_count; i++) {
		slurm_job_info_t *j = &m->job_array[i];
		uint32_t st = j->job_state & JOB_STATE_BASE;
		const char *g;
		char name[POL_FED_NAME_LEN];
		int d;

		if ((st != JOB_PENDING && st != JOB_RUNNING) ||
		    (j->job_state & JOB_REVOKED))
			continue;
		pol_fed_comment_dataset(j->comment, name, sizeof(name));
		d = pol_fed_catalog_job_dataset(cat, name, j->account, NULL);
		g = j->tres_req_str ? strstr(j->tres_req_str, "gres/gpu=")
				    : NULL;
		if (d >= 0 && g)
			demand[d] += atof(g + 9);
	}
	slurm_free_job_info_msg(m);
	slurm_fini();
	return 0;
}

static int cmd_place(int argc, char **argv)
{
	const char *copt = NULL, *sopt = NULL;
	bool apply = false;
	int max_moves = 20, n, rc = 1;
	pol_fed_catalog_t cat;
	pol_fed_place_result_t res;
	fed_cluster_t cl[FED_MAX];
	double *demand = NULL, *supply = NULL;
	char *path;
	long when;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--catalog") && i + 1 < argc)
			copt = argv[++i];
		else if (!strcmp(argv[i], "--state") && i + 1 < argc)
			sopt = argv[++i];
		else if (!strcmp(argv[i], "--max-moves") && i + 1 < argc) {
			unsigned long v;

			if (parse_count(argv[++i], 0, 1000000, &v)) {
				fprintf(stderr,
					"agoractl place: --max-moves: '%s' is not an integer in [0, 1000000]\n",
					argv[i]);
				return 2;
			}
			max_moves = (int) v;
		} else if (!strcmp(argv[i], "--apply"))
			apply = true;
		else {
			fprintf(stderr,
				"usage: agoractl place [--catalog FILE] [--state FILE] [--max-moves N] [--apply]\n");
			return 2;
		}
	}
	if (!(path = catalog_path(copt)))
		return 1;
	if (load_catalog(path, &cat)) {
		free(path);
		return 1;
	}
	if ((n = read_state(state_path(sopt), cl, &when)) < 0)
		goto out;
	demand = calloc(cat.n_datasets + 1, sizeof(double));
	supply = calloc(cat.n_sites + 1, sizeof(double));
	for (int s = 0; s < cat.n_sites; s++)
		for (int c = 0; c < n; c++)
			if (!strcmp(cl[c].name, cat.sites[s].name))
				supply[s] = cl[c].total;
	if (dataset_demand(&cat, demand))
		goto out;
	memset(&res, 0, sizeof(res));
	if (pol_fed_place(&cat, demand, supply, max_moves, apply, &res)) {
		ac_err("placement failed: %s\n", strerror(errno));
		goto out;
	}
	printf("# worst demand/supply: %.2f before, %.2f after %d moves\n",
	       res.worst_before, res.worst_after, res.n_moves);
	if (ac_json) {
		json_object *jc = json_object_new_array(),
			    *jm = json_object_new_array();

		for (int s = 0; s < cat.n_sites; s++) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "name",
					       ac_str(cat.sites[s].name));
			json_object_object_add(
				o, "before",
				ac_num(supply[s] ? res.before.demand_gpus[s] /
							   supply[s]
						 : 0));
			json_object_object_add(
				o, "after",
				ac_num(supply[s] ? res.after.demand_gpus[s] /
							   supply[s]
						 : 0));
			json_object_array_add(jc, o);
		}
		for (int k = 0; k < res.n_moves; k++) {
			pol_fed_move_t *mv = &res.moves[k];
			json_object *o = json_object_new_object();

			json_object_object_add(
				o, "dataset",
				ac_str(cat.datasets[mv->dataset].name));
			json_object_object_add(
				o, "from", ac_str(cat.sites[mv->from].name));
			json_object_object_add(
				o, "to",
				mv->to >= 0 ? ac_str(cat.sites[mv->to].name)
					    : NULL);
			json_object_object_add(o, "bytes", ac_num(mv->bytes));
			json_object_array_add(jm, o);
		}
		ac_add("worst_before", ac_num(res.worst_before));
		ac_add("worst_after", ac_num(res.worst_after));
		ac_add("clusters", jc);
		ac_add("moves", jm);
		ac_add("apply", json_object_new_boolean(apply));
	}
	printf("%-10s %14s %14s\n", "CLUSTER", "BEFORE", "AFTER");
	for (int s = 0; s < cat.n_sites; s++)
		printf("%-10s %14.2f %14.2f\n", cat.sites[s].name,
		       supply[s] ? res.before.demand_gpus[s] / supply[s] : 0,
		       supply[s] ? res.after.demand_gpus[s] / supply[s] : 0);
	for (int k = 0; k < res.n_moves; k++) {
		pol_fed_move_t *mv = &res.moves[k];
		const char *ds = cat.datasets[mv->dataset].name;

		if (mv->to >= 0)
			printf("rsync -a %s:datasets/%s/ %s:datasets/%s/   # %.1f GB\n",
			       cat.sites[mv->from].name, ds,
			       cat.sites[mv->to].name, ds, mv->bytes / 1e9);
		else
			printf("rm -rf %s:datasets/%s/   # drop a replica, %.1f GB\n",
			       cat.sites[mv->from].name, ds, mv->bytes / 1e9);
	}
	rc = 0;
	if (apply && res.n_moves) {
		char *json = pol_fed_catalog_format(&cat), tmp[4200];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.new", path);
		if (!json || !(f = fopen(tmp, "w")) || fputs(json, f) < 0 ||
		    fclose(f) || rename(tmp, path)) {
			ac_err("cannot write %s: %s\n", path, strerror(errno));
			rc = 1;
		} else {
			printf("# catalog %s updated\n", path);
		}
		free(json);
	}
	pol_fed_place_result_free(&res);
out:
	free(demand);
	free(supply);
	pol_fed_catalog_free(&cat);
	free(path);
	return rc;
}

int agoractl_fed_main(int argc, char **argv)
{
	if (!strcmp(argv[0], "fed"))
		return cmd_fed(argc, argv);
	if (!strcmp(argv[0], "explain"))
		return cmd_explain(argc, argv);
	if (!strcmp(argv[0], "datasets"))
		return cmd_datasets(argc, argv);
	return cmd_place(argc, argv);
}
