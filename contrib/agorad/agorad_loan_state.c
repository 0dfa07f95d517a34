/*
 * agorad_loan_state.c - the loan loop's state file, which agoractl loans
 * reads (nodes, reclaims, elastic ranges, grows; written atomically with
 * the core's writer), and what a restarted agorad reads back from it.
 * Calls the grow's and the elastic ranges' parts (agorad_grow.c,
 * agorad_elastic.c); nothing calls back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agora_file.h"
#include "agora_json.h"
#include "agorad.h"
#include "agorad_loan.h"

/* the loan state file's size cap when read back (a few MB at most) */
#define LN_STATE_MAX_BYTES (64 << 20)

static json_object *node_json(const ln_snap_t *s, int i)
{
	static const char *names[] = { "home", "lent", "returning" };
	const ln_node_t *n = &s->nodes[i];
	json_object *o = json_object_new_object(), *jobs;

	json_object_object_add(o, "name", json_object_new_string(n->name));
	json_object_object_add(o, "state",
			       json_object_new_string(names[n->state]));
	json_object_object_add(o, "up", json_object_new_boolean(n->up));
	if (n->registering)
		json_object_object_add(o, "registering",
				       json_object_new_boolean(true));
	json_object_object_add(o, "since", json_object_new_int64(n->since));
	jobs = json_object_new_array();
	for (int j = 0; j < s->n_jobs; j++)
		for (int k = 0; k < s->jobs[j].n_nodes; k++)
			if (s->jobs[j].nodes[k] == i)
				json_object_array_add(
					jobs,
					json_object_new_int64(s->jobs[j].id));
	json_object_object_add(o, "jobs", jobs);
	return o;
}

static json_object *reclaim_json(const ln_reclaim_t *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "time", json_object_new_int64(r->time));
	json_object_object_add(o, "need", json_object_new_int(r->need));
	json_object_object_add(o, "nodes", json_object_new_string(r->nodes));
	json_object_object_add(o, "victims",
			       json_object_new_string(r->victims));
	json_object_object_add(o, "cost", json_object_new_double(r->cost));
	json_object_object_add(o, "cost_slurm_order",
			       json_object_new_double(r->cost_slurm));
	json_object_object_add(o, "cost_most_recent",
			       json_object_new_double(r->cost_recent));
	json_object_object_add(o, "short_by", json_object_new_int(r->short_by));
	json_object_object_add(o, "done_s", json_object_new_double(r->done_s));
	json_object_object_add(o, "deadline_s",
			       json_object_new_int(r->deadline_s));
	return o;
}

void ln_write_state(const char *path, const ln_snap_t *s, int64_t now,
		    double demand, int want, const ln_round_view_t *v,
		    const ln_reclaim_t *hist, int n_hist)
{
	json_object *root, *a;
	agora_err_t err = { { 0 } };
	const char *text;

	if (!path)
		return;
	root = json_object_new_object();
	json_object_object_add(root, "time", json_object_new_int64(now));
	json_object_object_add(root, "demand", json_object_new_double(demand));
	json_object_object_add(root, "want", json_object_new_int(want));
	if (v && v->demand_ahead > 0)
		json_object_object_add(root, "demand_ahead",
				       json_object_new_double(v->demand_ahead));
	if (v && v->wait_s > 0) {
		json_object *w = json_object_new_object();

		json_object_object_add(w, "nodes",
				       json_object_new_int(v->need));
		json_object_object_add(w, "since",
				       json_object_new_int64(v->wait_since));
		json_object_object_add(w, "wait_s",
				       json_object_new_int64(v->wait_s));
		json_object_object_add(w, "ahead",
				       json_object_new_boolean(v->ahead));
		json_object_object_add(root, "ckpt_wait", w);
	}
	a = json_object_new_array();
	for (int i = 0; i < s->n_nodes; i++)
		json_object_array_add(a, node_json(s, i));
	json_object_object_add(root, "nodes", a);
	a = json_object_new_array();
	for (int i = 0; i < n_hist; i++)
		json_object_array_add(a, reclaim_json(&hist[i]));
	json_object_object_add(root, "reclaims", a);
	json_object_object_add(root, "elastic", ln_elastic_json());
	json_object_object_add(root, "grows", ad_grow_json());
	/* the core's writer: 0600, fsync, atomic rename, the previous copy
	 * kept as .prev */
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (agora_file_write_atomic(path, text, strlen(text), &err))
		ad_error("loan: cannot write the state: %s", err.text);
	json_object_put(root);
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v)
						   : 0;
}

static void jstr(json_object *o, const char *k, char *dst, size_t size)
{
	json_object *v;

	snprintf(dst, size, "%s",
		 json_object_object_get_ex(o, k, &v) ? json_object_get_string(v)
						     : "");
}

int ln_read_history(const char *path, ln_reclaim_t *hist, int max)
{
	agora_err_t err = { { 0 } };
	json_object *root, *a;
	int n = 0, used_prev = 0;

	if (!path)
		return 0;
	/* the history, the elastic ranges and the grows a previous agorad
	 * followed; a bad file (or a missing one beside a .prev) falls back
	 * to the copy the writer kept, and what cannot be read is said with
	 * its file and line, then started afresh (the loans themselves are
	 * on Slurm's objects, not here) */
	root = agora_json_read_file(path, LN_STATE_MAX_BYTES, &used_prev, &err);
	if (!root && errno != ENOENT)
		ad_error(
			"loan: cannot read the previous state: %s; the reclaim history and the grows followed start empty",
			err.text);
	else if (used_prev)
		ad_error("loan: %s", err.text);
	if (root && !json_object_is_type(root, json_type_object)) {
		ad_error(
			"loan: %s%s: not a JSON object; the reclaim history and the grows followed start empty",
			path, used_prev ? AGORA_FILE_PREV : "");
		json_object_put(root);
		return 0;
	}
	if (root && json_object_object_get_ex(root, "elastic", &a))
		ln_elastic_read(a);
	if (root && json_object_object_get_ex(root, "grows", &a))
		ad_grow_read(a);
	if (!root || !json_object_object_get_ex(root, "reclaims", &a) ||
	    !json_object_is_type(a, json_type_array)) {
		json_object_put(root);
		return 0;
	}
	for (size_t i = 0; i < json_object_array_length(a) && n < max; i++) {
		json_object *o = json_object_array_get_idx(a, i);
		ln_reclaim_t *r = &hist[n];

		if (!json_object_is_type(o, json_type_object))
			continue;
		n++;
		memset(r, 0, sizeof(*r));
		r->time = (int64_t) jnum(o, "time");
		r->need = (int) jnum(o, "need");
		jstr(o, "nodes", r->nodes, sizeof(r->nodes));
		jstr(o, "victims", r->victims, sizeof(r->victims));
		r->cost = jnum(o, "cost");
		r->cost_slurm = jnum(o, "cost_slurm_order");
		r->cost_recent = jnum(o, "cost_most_recent");
		r->short_by = (int) jnum(o, "short_by");
		r->done_s = jnum(o, "done_s");
		r->deadline_s = (int) jnum(o, "deadline_s");
	}
	json_object_put(root);
	return n;
}
