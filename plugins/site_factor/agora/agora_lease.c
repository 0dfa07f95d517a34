/*
 * agora_lease.c - the loan lease inside slurmctld (doc/loaning.md
 * "Fail-safety"): a node agorad lent carries a heartbeat in its Comment
 * ("Agora loan v1: lent since T, heartbeat T"), which agorad renews; the
 * loan ends here, on the side that is always there, once the heartbeat is
 * older than LoanLeaseTimeout: the node leaves the training partitions,
 * the training jobs on it are requeued as agorad's reclaim would, and its
 * mark says "returned".  The decision is the core's (pol_loan_lease_expire).
 *
 * Each pass: (1) read locks, snapshot the marked nodes and their
 * borrowers, decide; nothing due (the usual case): done.  (2) Otherwise
 * the write locks of "scontrol update partition" plus the federation read
 * lock of a requeue, snapshot and decide again (the state may have moved),
 * apply.
 */
#include "config.h"
#include "agora_compat.h"

#include <string.h>

#include "slurm/slurm.h"
#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "agora_lease.h"
#include "agora_sched.h"
#include "pol_loan_lease.h"

#define LOG_PREFIX "site_factor/agora"

typedef struct {
	int n; /* marked nodes */
	int *slurm_idx;
	pol_loan_lease_node_t *nodes;
	int n_jobs;
	job_record_t **job_ptr;
	pol_loan_lease_job_t *jobs;
	int *job_nodes;
	int *action;
	unsigned char *requeue;
	pol_loan_lease_out_t out;
} lease_snap_t;

static void snap_free(lease_snap_t *s)
{
	xfree(s->slurm_idx);
	xfree(s->nodes);
	xfree(s->job_ptr);
	xfree(s->jobs);
	xfree(s->job_nodes);
	xfree(s->action);
	xfree(s->requeue);
	memset(s, 0, sizeof(*s));
}

/* A partition of the list, as Slurm has it (part read lock). */
static bool in_train(const agora_conf_t *c, int node_inx)
{
	for (size_t i = 0; i < c->n_loan_train_partitions; i++) {
		part_record_t *p = find_part_record(
			c->loan_train_partitions[i]);

		if (p && p->node_bitmap && bit_test(p->node_bitmap, node_inx))
			return true;
	}
	return false;
}

static bool job_in_train(const agora_conf_t *c, job_record_t *job_ptr)
{
	return job_ptr->part_ptr &&
	       agora_conf_loan_partition(c, job_ptr->part_ptr->name, false);
}

/* Snapshot and decide (job, node, part read locks at least).  Returns the number of actions. */
static int lease_decide(const agora_conf_t *c, time_t now, lease_snap_t *s)
{
	ListIterator it;
	job_record_t *job_ptr;
	node_record_t *node_ptr;
	int *pos = xcalloc(MAX(node_record_count, 1), sizeof(int)), used = 0;
	pol_loan_lease_in_t in;

	memset(s, 0, sizeof(*s));
	s->slurm_idx = xcalloc(MAX(node_record_count, 1), sizeof(int));
	s->nodes = xcalloc(MAX(node_record_count, 1), sizeof(*s->nodes));
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		pol_loan_lease_node_t *n = &s->nodes[s->n];

		pos[node_ptr->index] = -1;
		if (pol_loan_lease_mark_parse(node_ptr->comment, &n->mark))
			continue;
		n->marked = true;
		n->in_train = in_train(c, node_ptr->index);
		pos[node_ptr->index] = s->n;
		s->slurm_idx[s->n++] = node_ptr->index;
	}
	if (!s->n) {
		xfree(pos);
		return 0;
	}
	s->job_ptr = xcalloc(MAX(list_count(job_list), 1), sizeof(*s->job_ptr));
	s->jobs = xcalloc(MAX(list_count(job_list), 1), sizeof(*s->jobs));
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		pol_loan_lease_job_t *pj = &s->jobs[s->n_jobs];
		int k = 0;

		if (!job_ptr->node_bitmap ||
		    !(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr) ||
		      IS_JOB_COMPLETING(job_ptr)) ||
		    !job_in_train(c, job_ptr))
			continue;
		for (int i = 0; i < s->n; i++)
			k += bit_test(job_ptr->node_bitmap, s->slurm_idx[i]);
		if (!k)
			continue;
		xrecalloc(s->job_nodes, used + k, sizeof(int));
		for (int i = 0; i < s->n; i++)
			if (bit_test(job_ptr->node_bitmap, s->slurm_idx[i]))
				s->job_nodes[used + pj->n_nodes++] = i;
		pj->nodes = NULL; /* set below: job_nodes may move */
		pj->requeue = job_ptr->batch_flag && job_ptr->details &&
			      job_ptr->details->requeue && !job_ptr->het_job_id;
		pj->done = IS_JOB_COMPLETING(job_ptr) ||
			   !(IS_JOB_RUNNING(job_ptr) ||
			     IS_JOB_SUSPENDED(job_ptr));
		s->job_ptr[s->n_jobs++] = job_ptr;
		used += k;
	}
	list_iterator_destroy(it);
	xfree(pos);
	for (int j = 0, off = 0; j < s->n_jobs; j++) {
		s->jobs[j].nodes = s->job_nodes + off;
		off += s->jobs[j].n_nodes;
	}
	s->action = xcalloc(s->n, sizeof(int));
	s->requeue = xcalloc(MAX(s->n_jobs, 1), 1);
	s->out = (pol_loan_lease_out_t){ .node_action = s->action,
					 .requeue = s->requeue };
	in = (pol_loan_lease_in_t){ .nodes = s->nodes,
				    .n_nodes = s->n,
				    .jobs = s->jobs,
				    .n_jobs = s->n_jobs,
				    .now = now,
				    .timeout_s = c->loan_lease_timeout_s };
	if (pol_loan_lease_expire(&in, &s->out)) {
		error("%s: the loan lease decision failed: %m", LOG_PREFIX);
		return 0;
	}
	return s->out.n_return + s->out.n_clear + s->out.n_requeue;
}

/* Take the returned nodes out of every training partition (the write
 * locks of "scontrol update partition" held).  Returns partitions
 * changed. */
static int return_nodes(const agora_conf_t *c, const lease_snap_t *s)
{
	int changed = 0;

	for (size_t i = 0; i < c->n_loan_train_partitions; i++) {
		part_record_t *p = find_part_record(
			c->loan_train_partitions[i]);
		update_part_msg_t m;
		bitstr_t *b;
		bool any = false;
		int rc;

		if (!p || !p->node_bitmap)
			continue;
		b = bit_copy(p->node_bitmap);
		for (int k = 0; k < s->n; k++)
			if (s->action[k] == POL_LOAN_LEASE_RETURN &&
			    bit_test(b, s->slurm_idx[k])) {
				bit_clear(b, s->slurm_idx[k]);
				any = true;
			}
		if (any) {
			slurm_init_part_desc_msg(&m);
			m.name = p->name;
			m.nodes = bitmap2node_name(b);
			rc = update_part(&m, false);
			if (rc)
				error("%s: loan lease: partition %s Nodes=%s: %s",
				      LOG_PREFIX, p->name, m.nodes,
				      slurm_strerror(rc));
			else
				changed++;
			xfree(m.nodes);
		}
		FREE_NULL_BITMAP(b);
	}
	return changed;
}

static void lease_apply(const agora_conf_t *c, const lease_snap_t *s,
			time_t now)
{
	int parts = return_nodes(c, s), requeued = 0;
	char text[192], t1[32];

	for (int j = 0; j < s->n_jobs; j++) {
		int rc;

		if (!s->requeue[j])
			continue;
		rc = job_requeue(slurm_conf.slurm_user_id,
				 s->job_ptr[j]->job_id, NULL, false, 0);
		if (rc)
			error("%s: loan lease: requeue of %pJ: %s", LOG_PREFIX,
			      s->job_ptr[j], slurm_strerror(rc));
		else
			requeued++;
	}
	for (int k = 0; k < s->n; k++) {
		node_record_t *node_ptr =
			node_record_table_ptr[s->slurm_idx[k]];
		pol_loan_lease_mark_t m = s->nodes[k].mark;

		if (!node_ptr || s->action[k] == POL_LOAN_LEASE_KEEP)
			continue;
		if (s->action[k] == POL_LOAN_LEASE_CLEAR) {
			info("%s: loan lease: %s is home (no borrower left); mark cleared",
			     LOG_PREFIX, node_ptr->name);
			xfree(node_ptr->comment);
			continue;
		}
		if (m.state == POL_LOAN_LEASE_LENT)
			info("%s: loan lease: %s returned to inference: heartbeat %s is older than LoanLeaseTimeout=%d s (agorad gone?)",
			     LOG_PREFIX, node_ptr->name,
			     pol_time_utc(m.heartbeat, t1, sizeof(t1)),
			     c->loan_lease_timeout_s);
		m.state = POL_LOAN_LEASE_RETURNED;
		m.returned = now;
		if (!pol_loan_lease_mark_format(&m, text, sizeof(text))) {
			xfree(node_ptr->comment);
			node_ptr->comment = xstrdup(text);
		}
	}
	if (requeued)
		info("%s: loan lease: %d borrower job(s) requeued", LOG_PREFIX,
		     requeued);
	last_node_update = now;
	if (requeued)
		last_job_update = now;
	schedule_node_save();
	if (parts) {
		last_part_update = now;
		schedule_part_save();
	}
}

extern void agora_lease_pass(time_t now)
{
	/* Read jobs, nodes and partitions: the look */
	slurmctld_lock_t read_locks = { READ_LOCK, READ_LOCK, READ_LOCK,
					READ_LOCK, NO_LOCK };
	/* Read config, write jobs, nodes and partitions (update_part),
	 * read the federation (job_requeue): the apply */
	slurmctld_lock_t write_locks = { READ_LOCK, WRITE_LOCK, WRITE_LOCK,
					 WRITE_LOCK, READ_LOCK };
	lease_snap_t s;
	int n;

	/* agora_conf is replaced only by this thread (take_offer), so it is
	 * read here without agora_state_lock: job_requeue() and update_part()
	 * run Slurm code that must not wait on an Agora lock */
	if (!agora_conf.loaning)
		return;
	lock_slurmctld(read_locks);
	if (!job_list || !part_list) {
		unlock_slurmctld(read_locks);
		return;
	}
	n = lease_decide(&agora_conf, now, &s);
	unlock_slurmctld(read_locks);
	snap_free(&s);
	if (!n)
		return;
	lock_slurmctld(write_locks);
	if (lease_decide(&agora_conf, now, &s))
		lease_apply(&agora_conf, &s, now);
	unlock_slurmctld(write_locks);
	snap_free(&s);
}
