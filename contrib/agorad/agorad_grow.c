/*
 * agorad_grow.c - elastic jobs grow onto idle training nodes (loaned ones
 * included), doc/loaning.md "Elastic jobs".
 *
 * When the training partitions have idle nodes and no training job waits
 * for nodes, the running elastic jobs (sbatch -N MIN-MAX
 * --comment=elastic) below their MAX get extra nodes by the core's
 * multiple-choice knapsack on JCT reduction (pol_loan_grow).  Without a
 * clock for the job's length, the time it has left is estimated as the
 * time it has run (the median rule for heavy-tailed run times), capped by
 * its time limit; a grow costs the work since the job's last checkpoint,
 * the restart overhead and the credential wait of a requeue, and must
 * shorten the job by LoanGrowMinGain on top of that.
 *
 * Slurm 22.05 grows a running job only with the job's help (a helper job
 * with --dependency=expand that the script merges itself, under
 * SchedulerParameters=permit_job_expansion); an unchanged batch script
 * cannot use nodes added under it.  So a grow is a requeue at the new
 * size: Slurm's requeue (SIGTERM, KillWait; the job checkpoints), then,
 * while the job pends, its node count is set to exactly the new size.  A
 * range would not do: once an operator has changed a job's node count,
 * Slurm starts it on its minimum, not on as many nodes as are free
 * (_get_req_features: limit_set.tres[TRES_ARRAY_NODE]).  If the job has
 * not restarted a while after its credential wait (the nodes went to
 * other work), or once it has run again and pends later (a reclaim's
 * requeue), its count goes back to the range it was submitted with, and
 * Slurm then starts it on that range's minimum.  No other grow starts
 * while a grown job has not restarted, so two grows never count the same
 * idle nodes.  A job with #SBATCH --signal gets its signal first and is
 * requeued after its grace (gpend meanwhile; no other grow starts).
 *
 * What a grow promises is written on the job, not only in agorad's state
 * file: its AdminComment (pol_loan_lease.h) "Agora elastic v1: range
 * MIN-MAX; grow A->B at T[, restarted on N]", written before the requeue;
 * follow() derives each round's step from that mark and Slurm's view alone
 * (pol_grow_follow), so an agorad started with no state finishes it.
 *
 * The decisions are the core's, snapshot in, grows out: the gate (quiet,
 * a grow not restarted or in its grace, the queue first: pol_grow_gate),
 * who may grow, the estimates and the knapsack (pol_grow_choose), the
 * follow rule (pol_grow_follow) and each requeue's --signal, grace and
 * limit (pol_requeue_next, via ln_requeue_step).  This file reads Slurm
 * into pol_grow_job_t and carries out what they return.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad.h"
#include "agorad_jobs.h"
#include "agorad_loan.h"
#include "agorad_relaunch.h"
#include "pol_loan.h"
#include "pol_loan_grow.h"
#include "pol_loan_lease.h"
#include "pol_loan_requeue.h"

#define GR_MAX     256 /* grown jobs followed */
#define GR_HISTORY 32  /* grows kept for agoractl loans */

typedef struct {
	uint32_t id;
	int from, to;   /* size before the grow, the knapsack's size */
	int64_t time;   /* when requeued */
	bool ranged;    /* its node count "to" is set in Slurm */
	bool restarted; /* seen running again: restore its range later */
	int min, max;   /* the range it was submitted with */
	double gain_s;  /* the knapsack's JCT reduction estimate */
	int started;    /* nodes it restarted on (0: not yet) */
} gr_job_t;

static gr_job_t gmap[GR_MAX];
static int n_gmap = 0;
static gr_job_t ghist[GR_HISTORY];
static int n_ghist = 0;
/* grows whose job got its --signal: requeued after its grace */
typedef struct {
	gr_job_t g;
	ln_rq_job_t rq;
} gr_pending_t;
static gr_pending_t gpend[GR_MAX];
static int n_gpend = 0;

static void gmap_drop(int i)
{
	memmove(&gmap[i], &gmap[i + 1], (n_gmap - i - 1) * sizeof(*gmap));
	n_gmap--;
}

static void ghist_put(const gr_job_t *g)
{
	for (int i = 0; i < n_ghist; i++)
		if (ghist[i].id == g->id && ghist[i].time == g->time) {
			ghist[i] = *g;
			return;
		}
	if (n_ghist == GR_HISTORY) {
		memmove(ghist, ghist + 1, (n_ghist - 1) * sizeof(*ghist));
		n_ghist--;
	}
	ghist[n_ghist++] = *g;
}

/* Set a pending job's node range. */
static int set_range(uint32_t id, int min, int max)
{
	job_desc_msg_t d;

	slurm_init_job_desc_msg(&d);
	d.job_id = id;
	d.min_nodes = (uint32_t) min;
	d.max_nodes = (uint32_t) max;
	if (slurm_update_job(&d)) {
		ad_error("loan: grow: node range %d-%d of job %u: %s", min, max,
			 id, slurm_strerror(slurm_get_errno()));
		return -1;
	}
	return 0;
}

/* The credential wait of a requeue: AuthInfo's cred_expire (Slurm's
 * default 120 s), after which the requeued job may start again. */
static int cred_wait_s(void)
{
	const slurm_conf_t *c = ad_ctl_conf();
	const char *p = c && c->authinfo ? strstr(c->authinfo, "cred_expire=")
					 : NULL;

	if (p && atoi(p + strlen("cred_expire=")) > 0)
		return atoi(p + strlen("cred_expire="));
	return 120;
}

static bool node_idle(const node_info_t *n)
{
	return (n->node_state & NODE_STATE_BASE) == NODE_STATE_IDLE &&
	       !(n->node_state &
		 (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_COMPLETING |
		  NODE_STATE_RES | NODE_STATE_MAINT | NODE_STATE_NO_RESPOND |
		  NODE_STATE_POWERED_DOWN | NODE_STATE_POWERING_UP |
		  NODE_STATE_POWERING_DOWN | NODE_STATE_REBOOT_REQUESTED |
		  NODE_STATE_PLANNED));
}

/* Idle nodes in the training partitions' node lists (loans included). */
static int idle_train_nodes(const agora_conf_t *conf)
{
	node_info_msg_t *nm = NULL;
	agora_hostlist_t hl = NULL;
	int n = 0;

	if (ln_loan_partitions(conf, NULL, &hl))
		return -1;
	if (slurm_load_node((time_t) 0, &nm, SHOW_ALL | SHOW_LOCAL)) {
		ad_error("loan: grow: cannot read the nodes: %s",
			 slurm_strerror(slurm_get_errno()));
		slurm_hostlist_destroy(hl);
		return -1;
	}
	for (uint32_t i = 0; i < nm->record_count; i++) {
		node_info_t *ni = &nm->node_array[i];

		if (ni->name && slurm_hostlist_find(hl, ni->name) >= 0 &&
		    node_idle(ni))
			n++;
	}
	slurm_free_node_info_msg(nm);
	slurm_hostlist_destroy(hl);
	return n;
}

/* A pending job's reason is a wait for nodes (not a dependency or a
 * begin time: a job agorad grew pends with BeginTime until its
 * credential wait is over). */
static bool waits_reason(uint32_t reason)
{
	switch (reason) {
	case WAIT_NO_REASON:
	case WAIT_PRIORITY:
	case WAIT_RESOURCES:
	case WAIT_PART_NODE_LIMIT:
	case WAIT_NODE_NOT_AVAIL:
		return true;
	default:
		return false;
	}
}

/* Write a grown job's mark (AdminComment).  0 or -1 (logged). */
static int put_mark(uint32_t id, const pol_elastic_mark_t *m)
{
	char text[160];

	if (pol_elastic_mark_format(m, text, sizeof(text)))
		return -1;
	return ln_set_admin_comment(id, text);
}

static gr_job_t gr_of_mark(uint32_t id, const pol_elastic_mark_t *m)
{
	return (gr_job_t){ .id = id,
			   .from = m->from,
			   .to = m->to,
			   .time = m->time,
			   .restarted = m->started > 0,
			   .started = m->started,
			   .min = m->min,
			   .max = m->max };
}

/*
 * Follow the grown jobs from their own marks (AdminComment "Agora elastic
 * v1: range MIN-MAX; grow A->B at T[, restarted on N]"), so that an agorad
 * started with no state (a wiped StateDirectory, another host) finishes
 * what an earlier one began; the decision is the core's rule
 * (pol_grow_follow).  Returns the grown jobs that have not restarted.
 */
static int follow(const job_info_msg_t *jm, int64_t now, int64_t give_up)
{
	int waiting = 0;

	n_gmap = 0;
	for (uint32_t k = 0; k < jm->record_count; k++) {
		const slurm_job_info_t *j = &jm->job_array[k];
		uint32_t st = j->job_state & JOB_STATE_BASE;
		pol_grow_obs_t o = { .pending = st == JOB_PENDING,
				     .running = st == JOB_RUNNING ||
						st == JOB_SUSPENDED,
				     .num_nodes = (int) j->num_nodes,
				     .max_nodes = (int) j->max_nodes };
		pol_elastic_mark_t m;
		gr_job_t g;

		if (pol_elastic_mark_parse(j->admin_comment, &m) || !m.grown ||
		    (!o.pending && !o.running))
			continue;
		g = gr_of_mark(j->job_id, &m);
		switch (pol_grow_follow(&m, &o, now, give_up)) {
		case POL_GROW_SET_SIZE:
			if (!set_range(g.id, g.to, g.to))
				g.ranged = true;
			waiting++;
			break;
		case POL_GROW_RESTARTED:
			m.started = o.num_nodes;
			if (put_mark(g.id, &m))
				break;
			g = gr_of_mark(j->job_id, &m);
			ad_info("loan: grow: job %u runs again on %d node(s) (was %d)",
				g.id, g.started, g.from);
			break;
		case POL_GROW_RESTORE:
			if (m.started)
				ad_info("loan: grow: job %u pends again after its grow; back to its range %d-%d",
					g.id, g.min, g.max);
			else
				ad_info("loan: grow: job %u has not restarted on %d-%d node(s) after %lld s; back to its range %d-%d",
					g.id, g.from, g.to,
					(long long) (now - g.time), g.min,
					g.max);
			if (!set_range(g.id, g.min, g.max)) {
				m.grown = false;
				m.started = 0;
				(void) put_mark(g.id, &m);
			}
			ghist_put(&g);
			continue;
		case POL_GROW_NONE:
			g.ranged = true;
			waiting += o.pending && !m.started;
			break;
		}
		ghist_put(&g);
		if (n_gmap < GR_MAX)
			gmap[n_gmap++] = g;
	}
	return waiting;
}

static int gpus_per_node(const slurm_job_info_t *j)
{
	const char *p = j->tres_alloc_str
				? strstr(j->tres_alloc_str, "gres/gpu=")
				: NULL;
	int g = p ? atoi(p + strlen("gres/gpu=")) : 0;

	g = j->num_nodes ? g / (int) j->num_nodes : g;
	return g > 0 ? g : 1;
}

/* The core's view of a job (pol_loan_grow.h). */
static void grow_job(const agora_conf_t *conf, const slurm_job_info_t *j,
		     pol_grow_job_t *g)
{
	uint32_t st = j->job_state & JOB_STATE_BASE;
	bool elastic = ln_elastic_comment(j->comment) >= 0;
	bool running = st == JOB_RUNNING && !(j->job_state & JOB_COMPLETING);

	*g = (pol_grow_job_t){
		.running = running,
		.pending = st == JOB_PENDING,
		.held = j->priority == 0,
		.waits_for_nodes_reason = waits_reason(j->state_reason),
		.train = agora_conf_loan_partition(conf, j->partition, false),
		.elastic = elastic,
		.requeue = j->requeue && j->batch_flag,
		.restarts = (int) j->restart_cnt,
		.mark_free = !j->admin_comment || !*j->admin_comment ||
			     !strncmp(j->admin_comment, POL_ELASTIC_PREFIX,
				      strlen(POL_ELASTIC_PREFIX)),
		.num_nodes = (int) j->num_nodes,
		.max_nodes = elastic ? ln_elastic_max(j->job_id) : 0,
		.start = (int64_t) j->start_time,
		.limit_s = j->time_limit != INFINITE && j->time_limit != NO_VAL
				   ? 60 * (int64_t) j->time_limit
				   : 0,
		.gpus_per_node = running && elastic ? gpus_per_node(j) : 1,
	};
}

/* Carry out a grow: the mark first (a crash before the requeue leaves a
 * running job with a grow mark, which the next round reads as restarted
 * and restores at its next pending), the requeue, then its size while it
 * pends. */
static void grow_apply(gr_job_t *g, const ln_rq_job_t *rq)
{
	pol_elastic_mark_t mk = { .min = g->min,
				  .max = g->max,
				  .grown = true,
				  .from = g->from,
				  .to = g->to,
				  .time = g->time };

	if (put_mark(g->id, &mk))
		return;
	if (ln_requeue_run(rq)) {
		mk.grown = false;
		(void) put_mark(g->id, &mk);
		return;
	}
	/* grown before and run since: this grow replaces it */
	for (int k = 0; k < n_gmap; k++)
		if (gmap[k].id == g->id)
			gmap_drop(k--);
	if (n_gmap == GR_MAX)
		return;
	gmap[n_gmap++] = *g;
	/* pending now: set its size at once (else next round) */
	if (!set_range(g->id, g->to, g->to))
		gmap[n_gmap - 1].ranged = true;
	ghist_put(&gmap[n_gmap - 1]);
}

/*
 * The grows chosen in an earlier round whose job was sent its --signal:
 * requeued at the new size once its grace is over (ln_requeue_step), if
 * it still runs the same run and may still grow; dropped otherwise, or
 * when a reclaim is under way (quiet).  Returns those still in their
 * grace (no other grow starts meanwhile).
 */
static int grow_pending(const agora_conf_t *conf, const job_info_msg_t *jm,
			const pol_grow_job_t *gjobs, int64_t now, bool quiet)
{
	int k = 0;

	for (int i = 0; i < n_gpend; i++) {
		gr_pending_t *p = &gpend[i];
		const slurm_job_info_t *j = NULL;
		pol_requeue_act_t act = POL_REQUEUE_NONE;
		uint32_t m;

		for (m = 0; m < jm->record_count && !j; m++)
			if (jm->job_array[m].job_id == p->g.id)
				j = &jm->job_array[m];
		if (j && (int64_t) j->start_time == p->rq.start &&
		    pol_grow_candidate(&gjobs[m - 1], conf->max_requeues) &&
		    !quiet) {
			ln_rq_from_job(conf, j, &p->rq);
			act = ln_requeue_step(conf, &p->rq, now, "a grow");
		}
		if (act == POL_REQUEUE_NOW) {
			p->g.time = now;
			grow_apply(&p->g, &p->rq);
			continue;
		}
		if (act == POL_REQUEUE_NONE) {
			ad_info("loan: grow: job %u not grown after its --signal (%s)",
				p->g.id,
				quiet ? "a reclaim is under way"
				      : "it no longer runs as it did, or may not grow");
			continue;
		}
		gpend[k++] = *p;
	}
	n_gpend = k;
	return n_gpend;
}

/* Decide (the core's pol_grow_choose) and carry out this round's grows:
 * each chosen job's requeue goes through its --signal and grace
 * (ln_requeue_step); those in their grace wait in gpend. */
static void grow_now(const agora_conf_t *conf, const job_info_msg_t *jm,
		     const pol_grow_in_t *in, int64_t now)
{
	pol_grow_out_t out = { 0 };

	out.jobs = calloc((size_t) in->n_jobs + 1, sizeof(*out.jobs));
	if (!out.jobs || pol_grow_choose(in, &out)) {
		ad_error("loan: grow: the decision failed: %s",
			 strerror(errno));
		free(out.jobs);
		return;
	}
	for (int i = 0; i < in->n_jobs; i++) {
		const slurm_job_info_t *j = &jm->job_array[i];
		const pol_grow_job_t *gj = &in->jobs[i];
		const pol_grow_job_out_t *o = &out.jobs[i];
		ln_rq_job_t rq;
		gr_job_t g;

		if (o->candidate)
			ad_debug(
				"loan: grow: job %u on %d of %d node(s): %.0f s left estimated, resize %.0f s",
				j->job_id, gj->num_nodes, gj->max_nodes,
				o->left_s, o->resize_s);
		if (!o->extra)
			continue;
		if (n_gmap == GR_MAX) {
			ad_error(
				"loan: grow: %d grown jobs followed already; job %u not grown",
				GR_MAX, j->job_id);
			continue;
		}
		g = (gr_job_t){ .id = j->job_id,
				.from = gj->num_nodes,
				.to = gj->num_nodes + o->extra,
				.time = now,
				.min = ln_elastic_min(j->job_id),
				.max = gj->max_nodes,
				.gain_s = o->gain_s };
		if (g.min <= 0)
			g.min = 1;
		ad_info("loan: grow: job %u %d -> %d node(s) by requeue at the new size: %.0f s left estimated, resize costs %.0f s, JCT -%.0f s (knapsack %s, %d idle node(s))",
			g.id, g.from, g.to, o->left_s,
			o->resize_s - (double) in->min_gain_s, g.gain_s,
			out.exact ? "exact" : "greedy", in->idle_nodes);
		ln_rq_from_job(conf, j, &rq);
		switch (ln_requeue_step(conf, &rq, now, "a grow")) {
		case POL_REQUEUE_NOW:
			grow_apply(&g, &rq);
			break;
		case POL_REQUEUE_SIGNAL:
		case POL_REQUEUE_WAIT:
			/* its --signal is sent: the requeue after its grace */
			if (n_gpend < GR_MAX)
				gpend[n_gpend++] = (gr_pending_t){ .g = g,
								   .rq = rq };
			break;
		case POL_REQUEUE_NONE:
			break;
		}
	}
	free(out.jobs);
}

void ad_grow_follow_only(const agora_conf_t *conf, int64_t now)
{
	const job_info_msg_t *jm;

	if (!n_gmap)
		return;
	if (!(jm = ad_jobs_load(ad_jobs_local(), AD_JOBS_PASS_S, NULL))) {
		ad_error("loan: grow: cannot read the jobs: %s",
			 slurm_strerror(slurm_get_errno()));
		return;
	}
	(void) follow(jm, now,
		      pol_grow_give_up_s(cred_wait_s(), conf->loan_interval_s));
}

void ad_grow_round(const agora_conf_t *conf, int64_t now, bool quiet)
{
	const job_info_msg_t *jm;
	pol_grow_job_t *gjobs;
	pol_grow_in_t in;
	int blocking = -1;

	if (!conf->loan_grow) {
		/* no new grow; those under way still end */
		ad_grow_follow_only(conf, now);
		return;
	}
	/* the loan snapshot's table of this pass, unless a job changed */
	if (!(jm = ad_jobs_load(ad_jobs_local(), AD_JOBS_PASS_S, NULL))) {
		ad_error("loan: grow: cannot read the jobs: %s",
			 slurm_strerror(slurm_get_errno()));
		return;
	}
	if (!(gjobs = calloc((size_t) jm->record_count + 1, sizeof(*gjobs)))) {
		ad_error("loan: grow: out of memory");
		return;
	}
	for (uint32_t k = 0; k < jm->record_count; k++)
		grow_job(conf, &jm->job_array[k], &gjobs[k]);
	in = (pol_grow_in_t){ .jobs = gjobs,
			      .n_jobs = (int) jm->record_count,
			      .now = now,
			      .quiet = quiet,
			      .ckpt_s = conf->loan_ckpt_s,
			      .restart_s = conf->loan_restart_s,
			      .cred_wait_s = cred_wait_s(),
			      .min_gain_s = conf->loan_grow_min_gain_s,
			      .serial = conf->loan_serial,
			      .max_requeues = conf->max_requeues };
	in.waiting = follow(
		jm, now,
		pol_grow_give_up_s(in.cred_wait_s, conf->loan_interval_s));
	in.waiting += grow_pending(conf, jm, gjobs, now, quiet);
	switch (pol_grow_gate(&in, &blocking)) {
	case POL_GROW_QUIET:
		ad_debug(
			"loan: grow: none now (reclaim under way or demand unknown)");
		break;
	case POL_GROW_WAITING:
		ad_debug(
			"loan: grow: none now (a grown job has not restarted yet, or is in its grace)");
		break;
	case POL_GROW_QUEUE:
		/* the queue first: no grow while a training job waits */
		ad_debug("loan: grow: none now (job %u waits for nodes)",
			 jm->job_array[blocking].job_id);
		break;
	case POL_GROW_GO:
		in.idle_nodes = idle_train_nodes(conf);
		ad_debug("loan: grow: %d idle training node(s)", in.idle_nodes);
		if (in.idle_nodes > 0)
			grow_now(conf, jm, &in, now);
		break;
	}
	free(gjobs);
}

/* One followed or past grow, as the state file keeps it. */
static json_object *gr_to_json(const gr_job_t *g)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "job", json_object_new_int64(g->id));
	json_object_object_add(o, "time", json_object_new_int64(g->time));
	json_object_object_add(o, "from", json_object_new_int(g->from));
	json_object_object_add(o, "to", json_object_new_int(g->to));
	json_object_object_add(o, "started", json_object_new_int(g->started));
	json_object_object_add(o, "gain_s", json_object_new_double(g->gain_s));
	json_object_object_add(o, "restarted",
			       json_object_new_boolean(g->restarted));
	json_object_object_add(o, "min", json_object_new_int(g->min));
	json_object_object_add(o, "max", json_object_new_int(g->max));
	return o;
}

static int jint(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int(v) : 0;
}

/* Read one back; false if it is not a grow (from >= 1, to > from). */
static bool gr_from_json(json_object *o, gr_job_t *g)
{
	json_object *v;

	memset(g, 0, sizeof(*g));
	g->id = (uint32_t) jint(o, "job");
	g->from = jint(o, "from");
	g->to = jint(o, "to");
	g->started = jint(o, "started");
	g->min = jint(o, "min");
	g->max = jint(o, "max");
	if (json_object_object_get_ex(o, "time", &v))
		g->time = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "gain_s", &v))
		g->gain_s = json_object_get_double(v);
	if (json_object_object_get_ex(o, "restarted", &v))
		g->restarted = json_object_get_boolean(v);
	/* its size is set again if unsure: that is idempotent */
	g->ranged = false;
	return g->id && g->from > 0 && g->to > g->from;
}

json_object *ad_grow_json(void)
{
	json_object *root = json_object_new_object(), *a;

	a = json_object_new_array();
	for (int i = 0; i < n_ghist; i++)
		json_object_array_add(a, gr_to_json(&ghist[i]));
	json_object_object_add(root, "history", a);
	a = json_object_new_array();
	for (int i = 0; i < n_gmap; i++)
		json_object_array_add(a, gr_to_json(&gmap[i]));
	json_object_object_add(root, "following", a);
	return root;
}

void ad_grow_read(json_object *grows)
{
	json_object *a;

	n_ghist = n_gmap = 0;
	if (json_object_object_get_ex(grows, "history", &a) &&
	    json_object_is_type(a, json_type_array))
		for (size_t i = 0;
		     i < json_object_array_length(a) && n_ghist < GR_HISTORY;
		     i++)
			n_ghist += gr_from_json(json_object_array_get_idx(a, i),
						&ghist[n_ghist]);
	/* the grown jobs a previous agorad followed, with their ranges */
	if (json_object_object_get_ex(grows, "following", &a) &&
	    json_object_is_type(a, json_type_array))
		for (size_t i = 0;
		     i < json_object_array_length(a) && n_gmap < GR_MAX; i++)
			n_gmap += gr_from_json(json_object_array_get_idx(a, i),
					       &gmap[n_gmap]) &&
				  gmap[n_gmap].min > 0 &&
				  gmap[n_gmap].max >= gmap[n_gmap].min;
}

void ad_grow_fini(void)
{
	n_gmap = n_ghist = n_gpend = 0;
}
