/*
 * loan_cmds.c - agoractl's loaning commands (doc/loaning.md):
 *
 *   agoractl loans [--state FILE]   the inference nodes (home, lent,
 *                                   returning), the training jobs on them
 *                                   and agorad's reclaim history
 *   agoractl loan-curve [--nodes N] [--day-seconds S] [--step S]
 *       [--peak F] [--ratio R] [--noise X] [--peak-hour H] [--seed N]
 *                                   the core's diurnal demand model
 *                                   (pol_loan_demand_at) compressed to a
 *                                   day of S seconds: "SECOND NODES" lines
 *
 * The loans come from agorad's loan state file, beside its -s file
 * (X.json -> X.loans.json): --state names the -s file, default
 * $AGORAD_STATE, else /var/lib/agorad/agorad.json, as agoractl fed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "ac_out.h"
#include "agora_file.h"
#include "agora_json.h"
#include "loan_cmds.h"
#include "pol_loan.h"

bool agoractl_loan_command(const char *cmd)
{
	return !strcmp(cmd, "loans") || !strcmp(cmd, "loan-curve");
}

/* agorad's -s file -> its loan state file (agorad_loan.c's rule). */
static char *loan_path(const char *opt)
{
	const char *e = getenv("AGORAD_STATE");
	const char *s = opt ? opt
			    : (e && *e ? e : "/var/lib/agorad/agorad.json");
	size_t n = strlen(s);
	char *p = malloc(n + sizeof(".loans.json"));

	if (!p)
		return NULL;
	if (n > 5 && !strcmp(s + n - 5, ".json"))
		snprintf(p, n + sizeof(".loans.json"), "%.*s.loans.json",
			 (int) (n - 5), s);
	else
		snprintf(p, n + sizeof(".loans.json"), "%s.loans", s);
	return p;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;

	const char *r;

	if (!json_object_object_get_ex(o, k, &v) || !v)
		return "";
	return (r = json_object_get_string(v)) ? r : "-";
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v)
						   : 0;
}

static void when(double t, char *buf, size_t size)
{
	time_t tt = (time_t) t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm))
		snprintf(buf, size, "-");
	else
		strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* Is o[k], when there, of type t (an array's items of type item, when
 * item is not json_type_null)?  Else err "WHEREK: not ..." */
static bool shape_ok(json_object *o, const char *k, json_type t, json_type item,
		     const char *where, agora_err_t *err)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return true;
	if (!json_object_is_type(v, t)) {
		agora_err_set(err, "%s%s: not %s", where, k,
			      t == json_type_array ? "an array" : "an object");
		return false;
	}
	if (t != json_type_array || item == json_type_null)
		return true;
	for (size_t i = 0; i < json_object_array_length(v); i++)
		if (!json_object_is_type(json_object_array_get_idx(v, i),
					 item)) {
			agora_err_set(err, "%s%s[%zu]: not %s", where, k, i,
				      item == json_type_int ? "a job id"
							    : "an object");
			return false;
		}
	return true;
}

/* The parts of the loan state the printers walk have the types they
 * walk (a hand-edited or foreign file is named, not crashed on). */
static bool loans_shape_ok(json_object *root, agora_err_t *err)
{
	json_object *a, *g;
	char where[32];

	if (!shape_ok(root, "nodes", json_type_array, json_type_object, "",
		      err) ||
	    !shape_ok(root, "reclaims", json_type_array, json_type_object, "",
		      err) ||
	    !shape_ok(root, "grows", json_type_object, json_type_null, "",
		      err) ||
	    !shape_ok(root, "ckpt_wait", json_type_object, json_type_null, "",
		      err))
		return false;
	if (json_object_object_get_ex(root, "grows", &g) &&
	    !shape_ok(g, "history", json_type_array, json_type_object, "grows.",
		      err))
		return false;
	if (!json_object_object_get_ex(root, "nodes", &a))
		return true;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		snprintf(where, sizeof(where), "nodes[%zu].", i);
		if (!shape_ok(json_object_array_get_idx(a, i), "jobs",
			      json_type_array, json_type_int, where, err))
			return false;
	}
	return true;
}

static void print_nodes(json_object *root)
{
	json_object *a, *n, *jobs;
	char since[32];

	printf("%-12s %-10s %-3s %-20s %s\n", "NODE", "STATE", "UP", "SINCE",
	       "BORROWERS");
	if (!json_object_object_get_ex(root, "nodes", &a))
		return;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		n = json_object_array_get_idx(a, i);
		when(jnum(n, "since"), since, sizeof(since));
		/* reg: up but not yet registered with a restarted
		 * slurmctld (counted home, never lent) */
		printf("%-12s %-10s %-3s %-20s", jstr(n, "name"),
		       jstr(n, "state"),
		       jnum(n, "registering") ? "reg"
		       : jnum(n, "up")        ? "yes"
					      : "no",
		       since);
		if (json_object_object_get_ex(n, "jobs", &jobs))
			for (size_t k = 0; k < json_object_array_length(jobs);
			     k++)
				printf(" %s", json_object_get_string(
						      json_object_array_get_idx(
							      jobs, k)));
		printf("\n");
	}
}

static void print_reclaims(json_object *root)
{
	json_object *a, *r;
	char t[32], done[16];

	printf("\n# reclaims (GPU-h lost: least-cost, and what Slurm's order and most-recent would have cost)\n");
	printf("%-20s %4s %8s %8s %8s %7s %8s %-20s %s\n", "TIME", "NEED",
	       "GPU_H", "SLURM", "RECENT", "DONE_S", "DEADLINE", "NODES",
	       "VICTIMS(job:GPU-h)");
	if (!json_object_object_get_ex(root, "reclaims", &a))
		return;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		r = json_object_array_get_idx(a, i);
		when(jnum(r, "time"), t, sizeof(t));
		if (jnum(r, "done_s") == -2)
			snprintf(done, sizeof(done), "cancel");
		else if (jnum(r, "done_s") < 0)
			snprintf(done, sizeof(done), "-");
		else
			snprintf(done, sizeof(done), "%.0f", jnum(r, "done_s"));
		printf("%-20s %4.0f %8.3f %8.3f %8.3f %7s %8.0f %-20s %s\n", t,
		       jnum(r, "need"), jnum(r, "cost"),
		       jnum(r, "cost_slurm_order"), jnum(r, "cost_most_recent"),
		       done, fabs(jnum(r, "deadline_s")), jstr(r, "nodes"),
		       jstr(r, "victims"));
	}
}

static void print_grows(json_object *root)
{
	json_object *g, *a, *r;
	char t[32], started[16];

	printf("\n# elastic grows (requeue at the new size; GAIN_S: the JCT reduction estimated)\n");
	printf("%-20s %-10s %5s %5s %8s %8s\n", "TIME", "JOB", "FROM", "TO",
	       "STARTED", "GAIN_S");
	if (!json_object_object_get_ex(root, "grows", &g) ||
	    !json_object_object_get_ex(g, "history", &a))
		return;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		r = json_object_array_get_idx(a, i);
		when(jnum(r, "time"), t, sizeof(t));
		if (jnum(r, "started") > 0)
			snprintf(started, sizeof(started), "%.0f",
				 jnum(r, "started"));
		else
			snprintf(started, sizeof(started), "-");
		printf("%-20s %-10.0f %5.0f %5.0f %8s %8.0f\n", t,
		       jnum(r, "job"), jnum(r, "from"), jnum(r, "to"), started,
		       jnum(r, "gain_s"));
	}
}

/* The round's reclaim ahead and its wait for a checkpoint, when any. */
static void print_wait(json_object *root)
{
	json_object *w;
	char t[64];

	if (jnum(root, "demand_ahead") > 0)
		printf("# demand projected %.2f nodes LoanReclaimAhead from now (its trend)\n",
		       jnum(root, "demand_ahead"));
	if (!json_object_object_get_ex(root, "ckpt_wait", &w))
		return;
	t[0] = '\0';
	if (jnum(w, "since") > 0) {
		strcpy(t, " since ");
		when(jnum(w, "since"), t + 7, sizeof(t) - 7);
	}
	printf("# a reclaim of %d node(s)%s waits for a checkpoint%s: %d s more at this round\n",
	       (int) jnum(w, "nodes"),
	       json_object_get_boolean(json_object_object_get(w, "ahead"))
		       ? " ahead of a rising demand"
		       : "",
	       t, (int) jnum(w, "wait_s"));
}

static int cmd_loans(int argc, char **argv)
{
	agora_err_t err = { { 0 } };
	const char *opt = NULL;
	char *path, *text = NULL, t[32];
	json_object *root;
	size_t len = 0;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--state") && i + 1 < argc)
			opt = argv[++i];
		else {
			fprintf(stderr,
				"usage: agoractl loans [--state FILE]\n");
			return 2;
		}
	if (!(path = loan_path(opt)))
		return 1;
	if (agora_file_read_ex(path, 64 << 20, AGORA_FILE_FOLLOW, &text, &len,
			       NULL, &err) < 0) {
		ac_err("%s (is agorad running with Loaning=yes and -s?)\n",
		       err.text);
		free(path);
		return 1;
	}
	root = agora_json_parse(text, len, path, &err);
	free(text);
	if (!root) {
		ac_err("%s\n", err.text);
		free(path);
		return 1;
	}
	if (!json_object_is_type(root, json_type_object) ||
	    !loans_shape_ok(root, &err)) {
		ac_err("%s: not agorad's loan state%s%s\n", path,
		       err.text[0] ? ": " : "", err.text);
		json_object_put(root);
		free(path);
		return 1;
	}
	when(jnum(root, "time"), t, sizeof(t));
	printf("# agorad's loan round of %s: demand %.2f nodes, %d kept for inference\n",
	       t, jnum(root, "demand"), (int) jnum(root, "want"));
	print_wait(root);
	print_nodes(root);
	print_reclaims(root);
	print_grows(root);
	if (ac_json)
		ac_add("loans", json_object_get(root));
	json_object_put(root);
	free(path);
	return 0;
}

static int num_arg(const char *opt, const char *v, double lo, double hi,
		   double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(*out) || *out < lo ||
	    *out > hi) {
		fprintf(stderr,
			"agoractl loan-curve: %s: '%s' not in [%g, %g]\n", opt,
			v, lo, hi);
		return -1;
	}
	return 0;
}

static int cmd_curve(int argc, char **argv)
{
	double nodes = 8, day = 86400, step = 0, v;
	pol_loan_demand_t d;
	static const char *opts[] = { "--nodes",     "--day-seconds", "--step",
				      "--peak",      "--ratio",       "--noise",
				      "--peak-hour", "--seed" };
	double val[8] = { 0 };
	bool set[8] = { false };

	for (int i = 1; i < argc; i++) {
		int k = 0;

		while (k < 8 && strcmp(argv[i], opts[k]))
			k++;
		if (k == 8 || i + 1 >= argc) {
			fprintf(stderr,
				"usage: agoractl loan-curve [--nodes N] [--day-seconds S] [--step S] [--peak F] [--ratio R] [--noise X] [--peak-hour H] [--seed N]\n");
			return 2;
		}
		if (num_arg(opts[k], argv[++i], 0, 1e9, &v))
			return 2;
		val[k] = v;
		set[k] = true;
	}
	nodes = set[0] ? val[0] : nodes;
	day = set[1] && val[1] >= 1 ? val[1] : day;
	step = set[2] && val[2] > 0 ? val[2] : day / 24;
	pol_loan_demand_default(&d, (int) nodes);
	if (set[3])
		d.peak = val[3] * nodes;
	if (set[4])
		d.ratio = val[4] < 1 ? 1 : val[4];
	if (set[5])
		d.noise = val[5];
	if (set[6])
		d.peak_hour = val[6];
	if (set[7])
		d.seed = (uint64_t) val[7];
	json_object *a = json_object_new_array();

	for (double s = 0; s < day; s += step) {
		double n = pol_loan_demand_at(&d, (int64_t) (s * 86400 / day));
		json_object *o = json_object_new_object();

		printf("%.0f %.3f\n", s, n);
		json_object_object_add(o, "second", ac_num(s));
		json_object_object_add(o, "nodes", ac_num(n));
		json_object_array_add(a, o);
	}
	ac_add("curve", a);
	return 0;
}

int agoractl_loan_main(int argc, char **argv)
{
	if (!strcmp(argv[0], "loans"))
		return cmd_loans(argc, argv);
	return cmd_curve(argc, argv);
}
