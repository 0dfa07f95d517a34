/*
 * agorad_loan_slurm.c - what the loan round reads from Slurm and writes to
 * it, through the public libslurm API only: the snapshot (inference nodes,
 * their loan state, the training jobs on them), training partitions' node
 * lists, node Comments, shrinks.  The demand source:
 * agorad_loan_demand.c; requeues: agorad_requeue.c; elastic ranges:
 * agorad_elastic.c; the state file agoractl loans reads:
 * agorad_loan_state.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad.h"
#include "agorad_jobs.h"
#include "agorad_loan.h"
#include "pol_loan_round.h"

static void scopy_n(char *dst, const char *src, size_t size)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static int node_index(const ln_snap_t *s, const char *name)
{
	for (int i = 0; i < s->n_nodes; i++)
		if (!strcmp(s->nodes[i].name, name))
			return i;
	return -1;
}

/* The inference partitions' nodes into s->nodes; *train gets the nodes of
 * the training partitions. */
int ln_loan_partitions(const agora_conf_t *conf, agora_hostlist_t *inf,
		       agora_hostlist_t *train)
{
	partition_info_msg_t *pm = NULL;

	if (slurm_load_partitions((time_t) 0, &pm, SHOW_ALL | SHOW_LOCAL)) {
		ad_error("loan: cannot read the partitions: %s",
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	if (inf)
		*inf = slurm_hostlist_create(NULL);
	*train = slurm_hostlist_create(NULL);
	for (uint32_t i = 0; i < pm->record_count; i++) {
		partition_info_t *p = &pm->partition_array[i];

		if (!p->name || !p->nodes || !*p->nodes)
			continue;
		if (inf && agora_conf_loan_partition(conf, p->name, true))
			slurm_hostlist_push(*inf, p->nodes);
		else if (agora_conf_loan_partition(conf, p->name, false))
			slurm_hostlist_push(*train, p->nodes);
	}
	slurm_free_partition_info_msg(pm);
	if (inf)
		slurm_hostlist_uniq(*inf);
	slurm_hostlist_uniq(*train);
	return 0;
}

static int snap_partitions(const agora_conf_t *conf, ln_snap_t *s,
			   agora_hostlist_t *train)
{
	agora_hostlist_t inf;
	char *h;

	if (ln_loan_partitions(conf, &inf, train))
		return -1;
	s->nodes = calloc(slurm_hostlist_count(inf) + 1, sizeof(*s->nodes));
	if (!s->nodes) {
		slurm_hostlist_destroy(inf);
		return -1;
	}
	while ((h = slurm_hostlist_shift(inf))) {
		ln_node_t *n = &s->nodes[s->n_nodes++];

		scopy_n(n->name, h, sizeof(n->name));
		n->in_train = slurm_hostlist_find(*train, h) >= 0;
		free(h);
	}
	slurm_hostlist_destroy(inf);
	return 0;
}

static int snap_nodes(ln_snap_t *s)
{
	node_info_msg_t *nm = NULL;

	if (slurm_load_node((time_t) 0, &nm, SHOW_ALL | SHOW_LOCAL)) {
		ad_error("loan: cannot read the nodes: %s",
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	for (uint32_t i = 0; i < nm->record_count; i++) {
		node_info_t *ni = &nm->node_array[i];
		uint32_t base = ni->node_state & NODE_STATE_BASE;
		int k = ni->name ? node_index(s, ni->name) : -1;

		if (k < 0)
			continue;
		/* UNKNOWN is up: a slurmctld restart recovers idle nodes so
		 * until their slurmd registers (about 4 s); counted as down,
		 * a round in that window finished borrowers on the returning
		 * nodes (their jobs keep the nodes MIXED) that the home
		 * nodes did not need (seen in test_loan.sh on CI) */
		s->nodes[k].up = base != NODE_STATE_DOWN &&
				 base != NODE_STATE_FUTURE &&
				 !(ni->node_state &
				   (NODE_STATE_DRAIN | NODE_STATE_FAIL));
		s->nodes[k].registering = base == NODE_STATE_UNKNOWN;
		s->nodes[k].free_comment = pol_loan_lease_comment_free(
			ni->comment);
		if (!pol_loan_lease_mark_parse(ni->comment,
					       &s->nodes[k].mark)) {
			s->nodes[k].commented = true;
			s->nodes[k].since = s->nodes[k].mark.since;
		}
	}
	slurm_free_node_info_msg(nm);
	return 0;
}

/* GPUs of a running job, from its allocated TRES ("...,gres/gpu=8"). */
static int job_gpus(const slurm_job_info_t *j)
{
	const char *p = j->tres_alloc_str
				? strstr(j->tres_alloc_str, "gres/gpu=")
				: NULL;

	return p ? atoi(p + strlen("gres/gpu=")) : 0;
}

/* One running job: marks its inference nodes; a training job on them is
 * added to s->jobs. */
static int snap_running(const agora_conf_t *conf, ln_snap_t *s,
			const slurm_job_info_t *j)
{
	bool train = agora_conf_loan_partition(conf, j->partition, false);
	agora_hostlist_t hl = slurm_hostlist_create(j->nodes);
	ln_job_t *lj = &s->jobs[s->n_jobs];
	char *h;

	/* a job at MaxRequeuesPerJob is, to the reclaim, one that cannot be
	 * requeued: its node is pinned until it ends */
	ln_rq_from_job(conf, j, &lj->rq);
	lj->requeue = ln_rq_allowed(conf, &lj->rq);
	lj->nodes = calloc(slurm_hostlist_count(hl) + 1, sizeof(int));
	if (!lj->nodes) {
		slurm_hostlist_destroy(hl);
		return -1;
	}
	while ((h = slurm_hostlist_shift(hl))) {
		int k = node_index(s, h);

		free(h);
		if (k < 0)
			continue;
		if (!train) {
			s->nodes[k].other_jobs = true;
			continue;
		}
		lj->nodes[lj->n_nodes++] = k;
		s->nodes[k].n_borrowers++;
		if (!lj->requeue)
			s->nodes[k].pinned = true;
	}
	slurm_hostlist_destroy(hl);
	if (!lj->n_nodes) {
		free(lj->nodes);
		lj->nodes = NULL;
		return 0;
	}
	lj->id = j->job_id;
	lj->min_nodes = ln_elastic_comment(j->comment);
	lj->elastic = lj->min_nodes >= 0;
	if (lj->min_nodes <= 0)
		lj->min_nodes = lj->elastic ? ln_elastic_min(j->job_id) : 0;
	lj->total_nodes = (int) j->num_nodes;
	lj->batch = j->batch_host ? node_index(s, j->batch_host) : -1;
	lj->all = strdup(j->nodes);
	lj->gpus = job_gpus(j);
	lj->start = j->start_time;
	s->n_jobs++;
	return 0;
}

/* A pending inference job that could run now: not held, waiting only
 * for nodes or for jobs ahead of it (no dependency, begin time, limit). */
static bool could_run(const slurm_job_info_t *j)
{
	if (j->priority == 0)
		return false;
	return j->state_reason == WAIT_NO_REASON ||
	       j->state_reason == WAIT_PRIORITY ||
	       j->state_reason == WAIT_RESOURCES;
}

/* An elastic job's submitted range: from its AdminComment mark, which
 * any agorad reads (pol_loan_lease.h), else as first seen pending, then
 * written into the mark (when the AdminComment is free). */
static void elastic_range(const slurm_job_info_t *j, bool pending)
{
	pol_elastic_mark_t m;
	char text[160];

	if (!pol_elastic_mark_parse(j->admin_comment, &m)) {
		ln_elastic_set(j->job_id, m.min, m.max);
		return;
	}
	if (!pending)
		return;
	ln_elastic_note(j->job_id, (int) j->num_nodes, (int) j->max_nodes);
	m = (pol_elastic_mark_t){ .min = ln_elastic_min(j->job_id),
				  .max = ln_elastic_max(j->job_id) };
	if ((!j->admin_comment || !*j->admin_comment) &&
	    !pol_elastic_mark_format(&m, text, sizeof(text)))
		(void) ln_set_admin_comment(j->job_id, text);
}

static int snap_jobs(const agora_conf_t *conf, ln_snap_t *s)
{
	const job_info_msg_t *jm;
	pol_loan_demand_job_t *dj = NULL;
	int rc = 0, n_dj = 0;

	if (!(jm = ad_jobs_load(ad_jobs_local(), 0, NULL))) {
		ad_error("loan: cannot read the jobs: %s",
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	s->jobs = calloc(jm->record_count + 1, sizeof(*s->jobs));
	dj = calloc(jm->record_count + 1, sizeof(*dj));
	if (!s->jobs || !dj) {
		free(dj);
		return -1;
	}
	for (uint32_t i = 0; i < jm->record_count && !rc; i++) {
		slurm_job_info_t *j = &jm->job_array[i];
		uint32_t st = j->job_state & JOB_STATE_BASE;
		bool run = st == JOB_RUNNING || st == JOB_SUSPENDED ||
			   (j->job_state & JOB_COMPLETING);

		if (ln_elastic_comment(j->comment) >= 0 &&
		    agora_conf_loan_partition(conf, j->partition, false))
			elastic_range(j, st == JOB_PENDING);
		if (agora_conf_loan_partition(conf, j->partition, true) &&
		    (run || st == JOB_PENDING))
			dj[n_dj++] = (pol_loan_demand_job_t){
				.nodes = (int) j->num_nodes,
				.running = run,
				.ready = st == JOB_PENDING && could_run(j),
			};
		if (run && j->nodes && *j->nodes)
			rc = snap_running(conf, s, j);
	}
	/* LoanDemandSource=jobs: what inference could use now */
	s->infer_job_nodes = (int) pol_loan_demand_jobs(dj, n_dj, s->n_nodes);
	free(dj);
	return rc;
}

/* A node in a training partition without a loan mark is not a loan (agorad
 * marks a node before it adds it): slurm.conf puts it in both kinds of
 * partition.  It is left alone: never lent, reclaimed or taken out of the
 * training partitions (train_list keeps the nodes not in the snapshot). */
static void drop_overlap(ln_snap_t *s)
{
	static int logged = -1;
	int k = 0, dropped = 0;
	char first[LN_NAME] = "";

	for (int i = 0; i < s->n_nodes; i++) {
		pol_loan_round_node_t n = {
			.in_train = s->nodes[i].in_train,
			.commented = s->nodes[i].commented
		};

		if (pol_loan_round_classify(&n) == POL_LOAN_NODE_ALONE) {
			if (!dropped++)
				scopy_n(first, s->nodes[i].name, sizeof(first));
			continue;
		}
		s->nodes[k++] = s->nodes[i];
	}
	s->n_nodes = k;
	if (dropped != logged && dropped)
		ad_info("loan: %d node(s) (first %s) are in an inference and a training partition without a loan mark: left alone (never lent or reclaimed)",
			dropped, first);
	logged = dropped;
}

int ln_snapshot(const agora_conf_t *conf, ln_snap_t *s)
{
	agora_hostlist_t train = NULL;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = snap_partitions(conf, s, &train);
	if (train)
		slurm_hostlist_destroy(train);
	if (!rc)
		rc = snap_nodes(s);
	if (!rc)
		drop_overlap(s);
	if (!rc)
		rc = snap_jobs(conf, s);
	if (rc)
		ln_snap_free(s);
	return rc;
}

void ln_snap_free(ln_snap_t *s)
{
	for (int j = 0; s->jobs && j < s->n_jobs; j++) {
		free(s->jobs[j].nodes);
		free(s->jobs[j].all);
	}
	free(s->jobs);
	free(s->nodes);
	memset(s, 0, sizeof(*s));
}

/* ---- writes --------------------------------------------------------- */

/* The node list of training partition p: its own nodes (those not
 * inference nodes) plus the lent ones.  malloc'ed. */
static char *train_list(const partition_info_t *p, const ln_snap_t *s,
			const bool *lend)
{
	agora_hostlist_t old = slurm_hostlist_create(p->nodes ? p->nodes : "");
	agora_hostlist_t nl = slurm_hostlist_create(NULL);
	char *h, *out;

	while ((h = slurm_hostlist_shift(old))) {
		if (node_index(s, h) < 0)
			slurm_hostlist_push_host(nl, h);
		free(h);
	}
	for (int i = 0; i < s->n_nodes; i++)
		if (lend[i])
			slurm_hostlist_push_host(nl, s->nodes[i].name);
	slurm_hostlist_uniq(nl);
	out = slurm_hostlist_ranged_string_malloc(nl);
	slurm_hostlist_destroy(old);
	slurm_hostlist_destroy(nl);
	return out;
}

int ln_set_train_nodes(const agora_conf_t *conf, const ln_snap_t *s,
		       const bool *lend)
{
	partition_info_msg_t *pm = NULL;
	int rc = 0;

	if (slurm_load_partitions((time_t) 0, &pm, SHOW_ALL | SHOW_LOCAL)) {
		ad_error("loan: cannot read the partitions: %s",
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	for (uint32_t i = 0; i < pm->record_count; i++) {
		partition_info_t *p = &pm->partition_array[i];
		update_part_msg_t m;
		char *nodes;

		if (!agora_conf_loan_partition(conf, p->name, false))
			continue;
		if (!(nodes = train_list(p, s, lend)))
			continue;
		if (!p->nodes || strcmp(nodes, p->nodes)) {
			slurm_init_part_desc_msg(&m);
			m.name = p->name;
			m.nodes = nodes;
			if (slurm_update_partition(&m)) {
				ad_error("loan: partition %s Nodes=%s: %s",
					 p->name, nodes,
					 slurm_strerror(slurm_get_errno()));
				rc = -1;
			} else
				ad_verbose("loan: partition %s Nodes=%s",
					   p->name, nodes);
		}
		free(nodes);
	}
	slurm_free_partition_info_msg(pm);
	return rc;
}

int ln_set_comment(const char *node, const char *text)
{
	update_node_msg_t m;

	slurm_init_update_node_msg(&m);
	m.node_names = (char *) node;
	m.comment = (char *) (text ? text : "");
	if (slurm_update_node(&m)) {
		ad_error("loan: node %s Comment: %s", node,
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	return 0;
}

int ln_set_lent_mark(ln_node_t *n, int64_t now)
{
	pol_loan_lease_mark_t m = { .version = POL_LOAN_LEASE_VERSION,
				    .state = POL_LOAN_LEASE_LENT,
				    .since = n->since > 0 ? n->since : now,
				    .heartbeat = now };
	char text[160];

	if (pol_loan_lease_mark_format(&m, text, sizeof(text)) ||
	    ln_set_comment(n->name, text))
		return -1;
	n->mark = m;
	n->since = m.since;
	n->commented = true;
	return 0;
}

int ln_shrink(uint32_t job_id, const char *keep)
{
	job_desc_msg_t d;

	slurm_init_job_desc_msg(&d);
	d.job_id = job_id;
	d.req_nodes = (char *) keep;
	if (slurm_update_job(&d)) {
		ad_error("loan: shrink of job %u to %s: %s", job_id, keep,
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	return 0;
}
