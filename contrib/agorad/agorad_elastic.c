/*
 * agorad_elastic.c - elastic jobs as agorad knows them: the opt-in in a
 * job's comment, the node range first seen while it pended (kept in the
 * loan state file for the next agorad), and the AdminComment that carries
 * its elastic mark (pol_grow_follow reads it).  Used by the loan
 * snapshot (agorad_loan_slurm.c) and the grow (agorad_grow.c); calls
 * neither.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad.h"
#include "agorad_loan.h"

/* Elastic jobs' minimum node counts, as seen while they were pending;
 * kept in the state file for the next agorad. */
#define LN_ELASTIC_MAX 1024
static struct {
	uint32_t id;
	int min, max;
} emap[LN_ELASTIC_MAX];
static int n_emap = 0;

static int emap_find(uint32_t job_id)
{
	for (int i = 0; i < n_emap; i++)
		if (emap[i].id == job_id)
			return i;
	return -1;
}

/* The first range seen is kept: later, a pending job shows Slurm's
 * estimate of its node count (after a shrink and a requeue, the size it
 * had), not its minimum. */
void ln_elastic_note(uint32_t job_id, int min_nodes, int max_nodes)
{
	if (emap_find(job_id) >= 0)
		return;
	if (n_emap == LN_ELASTIC_MAX) {
		memmove(emap, emap + 1, (n_emap - 1) * sizeof(*emap));
		n_emap--;
	}
	emap[n_emap].id = job_id;
	emap[n_emap].min = min_nodes > 0 ? min_nodes : 1;
	emap[n_emap++].max = max_nodes;
}

void ln_elastic_set(uint32_t job_id, int min_nodes, int max_nodes)
{
	int i = emap_find(job_id);

	if (i < 0) {
		ln_elastic_note(job_id, min_nodes, max_nodes);
		return;
	}
	emap[i].min = min_nodes > 0 ? min_nodes : 1;
	emap[i].max = max_nodes;
}

int ln_set_admin_comment(uint32_t job_id, const char *text)
{
	job_desc_msg_t d;

	slurm_init_job_desc_msg(&d);
	d.job_id = job_id;
	d.admin_comment = (char *) text;
	if (slurm_update_job(&d)) {
		ad_error("loan: job %u AdminComment: %s", job_id,
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	return 0;
}

int ln_elastic_min(uint32_t job_id)
{
	int i = emap_find(job_id);

	return i < 0 ? 0 : emap[i].min;
}

int ln_elastic_max(uint32_t job_id)
{
	int i = emap_find(job_id);

	return i < 0 ? 0 : emap[i].max;
}

int ln_elastic_comment(const char *comment)
{
	char *end;
	long m;

	if (!comment || strncmp(comment, "elastic", 7))
		return -1;
	if (!comment[7] || comment[7] == ' ' || comment[7] == ',' ||
	    comment[7] == ';')
		return 0;
	if (comment[7] != ':')
		return -1;
	m = strtol(comment + 8, &end, 10);
	return end > comment + 8 && m > 0 && m < 1000000 ? (int) m : 0;
}

/* The elastic ranges' part of the loan state file, and reading it back
 * (agorad_loan_state.c). */
json_object *ln_elastic_json(void)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < n_emap; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "job",
				       json_object_new_int64(emap[i].id));
		json_object_object_add(e, "min_nodes",
				       json_object_new_int(emap[i].min));
		json_object_object_add(e, "max_nodes",
				       json_object_new_int(emap[i].max));
		json_object_array_add(a, e);
	}
	return a;
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v)
						   : 0;
}

void ln_elastic_read(json_object *a)
{
	if (!a || !json_object_is_type(a, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (jnum(e, "job") > 0 && jnum(e, "min_nodes") > 0)
			ln_elastic_note((uint32_t) jnum(e, "job"),
					(int) jnum(e, "min_nodes"),
					(int) jnum(e, "max_nodes"));
	}
}
