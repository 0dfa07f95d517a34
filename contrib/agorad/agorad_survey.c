/*
 * agorad_survey.c - what the children of steps 1 and 2 of a round do on
 * their cluster (agorad_round.c runs one per cluster, with libslurm's
 * target cluster set to it).
 *
 *   1. survey: the jobs with a step of the federation hold left
 *      (pol_fed_seen_act: at this origin to auction, to release, to
 *      finish; a sibling copy pinned here and not started in time: to
 *      auction again),
 *      free/total GPUs (the nodes' GRES in use), pending GPU demand, the
 *      running GPU jobs' limits and the queue (the start estimate), and
 *      the usage per app that slurmctld/agora publishes
 *   2. plans: Slurm's will-run of each held job on this cluster; the first
 *      request carries the other clusters' usage per app and tells
 *      job_submit/agora that agorad is alive
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agora_fed_marks.h"
#include "agorad_round_int.h"
#include "pol_fed_locality.h"
#include "pol_fed_willrun.h"

/* exported by libslurm, not declared in its public headers */
extern void slurm_free_will_run_response_msg(will_run_response_msg_t *msg);

/* libslurm's job_desc_msg_t takes char *, not const char * */
static char plan_name[] = "agora-plan";
static char heartbeat_name[] = "agora-heartbeat";
static char plan_mark[] = AGORA_FED_PLAN;
static char root_dir[] = "/"; /* a will-run's work_dir when the job has none */

/* ---- 1. survey ------------------------------------------------------ */

/* "gpu:8", "gpu:a100:8(S:0-1)", "gpu:3(IDX:0-2)": the GPU count */
static int gres_gpus(const char *s)
{
	int total = 0;

	if (!s)
		return 0;
	while ((s = strstr(s, "gpu"))) {
		const char *p = s + 3, *end = p;

		while (*end && *end != ',' && *end != '(')
			end++;
		/* the count is after the last ':' before end */
		for (const char *q = end; q > p; q--)
			if (q[-1] == ':') {
				total += atoi(q);
				break;
			}
		s = end;
	}
	return total;
}

/* "cpu=2,mem=1G,node=1,billing=2,gres/gpu=8" -> 8 */
static int tres_gpus(const char *s)
{
	const char *p = s ? strstr(s, "gres/gpu=") : NULL;

	return p ? atoi(p + strlen("gres/gpu=")) : 0;
}

/* whole or refused (pol_fed_willrun_copy): a->too_long names the first
 * field that did not fit */
#define COPY(field, src)                                                       \
	(void) pol_fed_willrun_copy(a->field, sizeof(a->field), src, #field,   \
				    a->too_long, sizeof(a->too_long))

/* The held job j of origin me, as the round carries it: the whole
 * request the will-run must see, every string whole or refused. */
static void job_from_info(ad_job_t *a, const slurm_job_info_t *j,
			  const char *me)
{
	a->job_id = j->job_id;
	a->user_id = j->user_id;
	a->group_id = j->group_id;
	a->num_nodes = j->num_nodes;
	a->max_nodes = j->max_nodes;
	a->num_tasks = j->num_tasks;
	a->num_cpus = j->num_cpus;
	a->time_limit = j->time_limit;
	a->cpus_per_task = j->cpus_per_task;
	a->ntasks_per_node = j->ntasks_per_node;
	a->pn_min_memory = j->pn_min_memory;
	a->gpus = tres_gpus(j->tres_req_str);
	a->submit = j->submit_time;
	a->shared = j->shared;
	a->contiguous = j->contiguous;
	a->core_spec = j->core_spec;
	a->sockets_per_node = j->sockets_per_node;
	a->cores_per_socket = j->cores_per_socket;
	a->threads_per_core = j->threads_per_core;
	a->ntasks_per_socket = j->ntasks_per_socket;
	a->ntasks_per_core = j->ntasks_per_core;
	a->ntasks_per_tres = j->ntasks_per_tres;
	a->req_switch = j->req_switch;
	a->wait4switch = j->wait4switch;
	scopy(a->origin, me, sizeof(a->origin));
	COPY(account, j->account);
	COPY(partition, j->partition);
	COPY(qos, j->qos);
	COPY(tres_per_node, j->tres_per_node);
	COPY(tres_per_job, j->tres_per_job);
	COPY(tres_per_task, j->tres_per_task);
	COPY(tres_per_socket, j->tres_per_socket);
	COPY(cpus_per_tres, j->cpus_per_tres);
	COPY(mem_per_tres, j->mem_per_tres);
	COPY(features, j->features);
	COPY(viable, j->fed_siblings_viable_str);
	COPY(prefer, j->prefer);
	COPY(licenses, j->licenses);
	COPY(reservation, j->resv_name);
	COPY(cluster_features, j->cluster_features);
	COPY(network, j->network);
	COPY(req_nodes, j->req_nodes);
	COPY(exc_nodes, j->exc_nodes);
	COPY(work_dir, j->work_dir);
	pol_fed_comment_dataset(j->comment, a->dataset, sizeof(a->dataset));
}

#undef COPY

/* A job's time limit in s; unlimited (or unset) as the horizon. */
int64_t ad_limit_s(uint32_t minutes)
{
	if (minutes == INFINITE || minutes == NO_VAL)
		return POL_FED_HORIZON_S;
	return pol_fed_limit_s((int64_t) minutes * 60);
}

pol_fed_hold_obs_t hold_obs(const slurm_job_info_t *j)
{
	uint32_t base = j->job_state & JOB_STATE_BASE;
	pol_fed_hold_obs_t o = {
		/* an origin copy pinned elsewhere is pending and revoked:
		 * still held at its origin until released */
		.pending = base == JOB_PENDING,
		.active = base == JOB_PENDING || base == JOB_RUNNING ||
			  base == JOB_SUSPENDED,
		.held = j->priority == 0,
		.ran = j->restart_cnt > 0,
		.submit = j->submit_time,
	};

	return o;
}

/* g more running GPUs of account into h's rows; past AD_ACCT_MAX
 * accounts, into the last row, renamed AD_ACCT_OTHER. */
static void acct_add(ad_survey_hdr_t *h, const char *account, int g)
{
	const char *a = account ? account : "";
	int i;

	for (i = 0; i < h->jp.n_acct; i++)
		if (!strcmp(h->jp.acct[i].account, a))
			break;
	if (i == h->jp.n_acct && h->jp.n_acct < AD_ACCT_MAX) {
		scopy(h->jp.acct[i].account, a, sizeof(h->jp.acct[i].account));
		h->jp.n_acct++;
	} else if (i == h->jp.n_acct) {
		i = AD_ACCT_MAX - 1;
		scopy(h->jp.acct[i].account, AD_ACCT_OTHER,
		      sizeof(h->jp.acct[i].account));
	}
	h->jp.acct[i].gpus += g;
}

/* The jobs of jm into h and mine (the ones with a step of the hold left)
 * and busy (running GPU jobs: their GPUs and the end of their limits). */
static void survey_jobs(const job_info_msg_t *jm, const char *me, time_t now,
			int pin_timeout_s, ad_survey_hdr_t *h, ad_job_t *mine,
			pol_fed_busy_t *busy, uint32_t *copies, uint32_t *alive,
			uint32_t *cancelled)
{
	for (uint32_t i = 0; i < jm->record_count; i++) {
		slurm_job_info_t *j = &jm->job_array[i];
		uint32_t base = j->job_state & JOB_STATE_BASE;
		pol_fed_hold_act_t act;
		pol_fed_mark_t m;
		pol_fed_seen_t seen;
		int g;

		/* a copy of a job from another origin: a pin that arrived
		 * (pol_fed_inflight.h), in any state but revoked (one that
		 * ran and ended between two surveys arrived too) */
		if (j->fed_origin_str && strcmp(j->fed_origin_str, me) &&
		    !(j->job_state & JOB_REVOKED))
			copies[h->jp.n_copies++] = j->job_id;
		/* a live copy here of a job from another origin, and a job
		 * of this origin that it shows cancelled: a copy still on
		 * its way when the user cancelled it (pol_fed_orphans) */
		if (j->fed_origin_str && strcmp(j->fed_origin_str, me) &&
		    !(j->job_state & JOB_REVOKED) &&
		    (base == JOB_PENDING || base == JOB_RUNNING ||
		     base == JOB_SUSPENDED))
			alive[h->jp.n_alive++] = j->job_id;
		if (j->fed_origin_str && !strcmp(j->fed_origin_str, me) &&
		    base == JOB_CANCELLED)
			cancelled[h->jp.n_cancelled++] = j->job_id;
		if (base == JOB_RUNNING && !(j->job_state & JOB_REVOKED) &&
		    (g = tres_gpus(j->tres_alloc_str)) > 0) {
			int64_t end = j->start_time + ad_limit_s(j->time_limit);

			busy[h->jp.n_busy].gpus = g;
			busy[h->jp.n_busy++].end = end > now ? end : now;
			acct_add(h, j->account, g);
			if (ad_limit_s(j->time_limit) > h->jp.max_limit_s)
				h->jp.max_limit_s = ad_limit_s(j->time_limit);
		}
		/* at its origin: what is left of the hold; a sibling copy
		 * pinned here: its failover (pol_fed_seen_act) */
		seen.obs = hold_obs(j);
		seen.origin = j->fed_origin_str;
		seen.revoked = (j->job_state & JOB_REVOKED) != 0;
		pol_fed_mark_parse(j->admin_comment, &m);
		act = pol_fed_seen_act(&seen, &m, me, pin_timeout_s, now,
				       &h->jp.recheck_at);
		if (act != POL_FED_HOLD_NONE) {
			ad_job_t *a = &mine[h->jp.n_jobs++];

			job_from_info(a, j, me);
			a->act = act;
			a->hold_since = m.since > 0 ? m.since : j->submit_time;
			scopy(a->pin_cluster, m.cluster,
			      sizeof(a->pin_cluster));
			if (act == POL_FED_HOLD_REAUCTION) {
				scopy(a->origin, j->fed_origin_str,
				      sizeof(a->origin));
				/* its clusters before the pin ("" any) */
				scopy(a->viable, m.clusters, sizeof(a->viable));
				a->stamp_at = m.at;
			}
		}
		if (base != JOB_PENDING || (j->job_state & JOB_REVOKED))
			continue;
		g = tres_gpus(j->tres_req_str);
		h->jp.gpus_pending += g;
		/* may run ahead of ours, now: not held, waiting for nothing
		 * but resources (a sibling copy agorad pinned here, too) */
		if (g > 0 && j->priority != 0 &&
		    (j->state_reason == WAIT_NO_REASON ||
		     j->state_reason == WAIT_PRIORITY ||
		     j->state_reason == WAIT_RESOURCES)) {
			h->jp.gpus_queued += g;
			h->jp.jobs_queued++;
			h->jp.queued_gpu_s += (double) g *
					      ad_limit_s(j->time_limit);
			if (ad_limit_s(j->time_limit) > h->jp.max_limit_s)
				h->jp.max_limit_s = ad_limit_s(j->time_limit);
		}
	}
}

/* The survey's node table read (on a thread beside the job table's). */
typedef struct {
	node_info_msg_t *nm;
	int rc, err;
} ad_node_read_t;

static void *node_read(void *arg)
{
	ad_node_read_t *nr = arg;

	/* SHOW_DETAIL: without it slurmctld leaves gres_used out, and every
	 * GPU looks free */
	nr->rc = slurm_load_node(0, &nr->nm,
				 SHOW_ALL | SHOW_LOCAL | SHOW_DETAIL);
	nr->err = nr->rc ? slurm_get_errno() : 0;
	if (nr->rc)
		nr->nm = NULL;
	return NULL;
}

void survey_child(const ad_round_t *r, int c, int fd)
{
	ad_survey_hdr_t h = { 0 };
	job_info_msg_t *jm = NULL;
	node_info_msg_t *nm = NULL;
	ad_job_t *mine = NULL;
	pol_fed_busy_t *busy = NULL;
	uint32_t *copies = NULL, *alive = NULL, *cancelled = NULL;
	ad_usage_t *us = NULL;
	const char *me = r->clusters[c].name;

	/* the job table asked with the last full read's update time: when
	 * no job changed, slurmctld packs none (20,000 queued jobs are a
	 * long read lock) and the round reuses the last job part */
	time_t since = r->clusters[c].survey ? r->clusters[c].jobs_update : 0;
	ad_survey_hdr_t last;

	/* ... unless a decision on it is due by the clock (recheck_at) */
	if (since && r->clusters[c].survey_len >= sizeof(last)) {
		memcpy(&last, r->clusters[c].survey, sizeof(last));
		if (last.jp.recheck_at > 0 && time(NULL) >= last.jp.recheck_at)
			since = 0;
	}

	/* the node table beside the job table, on a thread: a cluster busy
	 * taking a burst's copies answered each read a second or more late
	 * (doc/evaluation.md, "The sibling's answers on the round's
	 * path"), and the two waits overlap */
	ad_node_read_t nr = { 0 };
	pthread_t nt;
	bool threaded = !pthread_create(&nt, NULL, node_read, &nr);
	int jrc = slurm_load_jobs(since, &jm, SHOW_ALL | SHOW_LOCAL);
	int je = jrc ? slurm_get_errno() : 0;

	if (threaded)
		(void) pthread_join(nt, NULL);
	else
		(void) node_read(&nr);
	nm = nr.nm;
	if (jrc) {
		if (!since || je != SLURM_NO_CHANGE_IN_DATA) {
			h.timed_out =
				je == SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT ||
				je == ETIMEDOUT;
			snprintf(h.err, sizeof(h.err), "%s",
				 slurm_strerror(je));
			(void) write_all(fd, &h, sizeof(h));
			if (nm)
				slurm_free_node_info_msg(nm);
			return;
		}
		jm = NULL;
		h.jobs_same = 1;
	}
	if (nr.rc) {
		h.timed_out = nr.err == SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT ||
			      nr.err == ETIMEDOUT;
		snprintf(h.err, sizeof(h.err), "%s", slurm_strerror(nr.err));
		(void) write_all(fd, &h, sizeof(h));
		if (jm)
			slurm_free_job_info_msg(jm);
		return;
	}
	mine = calloc(jm ? jm->record_count + 1 : 1, sizeof(*mine));
	busy = calloc(jm ? jm->record_count + 1 : 1, sizeof(*busy));
	copies = calloc(jm ? jm->record_count + 1 : 1, sizeof(*copies));
	alive = calloc(jm ? jm->record_count + 1 : 1, sizeof(*alive));
	cancelled = calloc(jm ? jm->record_count + 1 : 1, sizeof(*cancelled));
	if (!mine || !busy || !copies || !alive || !cancelled) {
		snprintf(h.err, sizeof(h.err), "out of memory");
		(void) write_all(fd, &h, sizeof(h));
		free(mine);
		free(busy);
		free(copies);
		free(alive);
		free(cancelled);
		return;
	}
	h.ok = 1;
	if (jm) {
		h.jp.jobs_update = jm->last_update;
		survey_jobs(jm, me, time(NULL), r->pin_start_timeout_s, &h,
			    mine, busy, copies, alive, cancelled);
	}
	for (uint32_t i = 0; i < nm->record_count; i++) {
		node_info_t *n = &nm->node_array[i];
		uint32_t base = n->node_state & NODE_STATE_BASE;
		int g = gres_gpus(n->gres), used = gres_gpus(n->gres_used);
		bool usable = base != NODE_STATE_DOWN &&
			      base != NODE_STATE_FUTURE &&
			      base != NODE_STATE_UNKNOWN &&
			      !(n->node_state &
				(NODE_STATE_DRAIN | NODE_STATE_NO_RESPOND));

		if (!n->name)
			continue;
		h.n_nodes++;
		h.gpus_total += g;
		if (g > h.gpus_per_node)
			h.gpus_per_node = g;
		if (usable && g > used)
			h.gpus_free += g - used;
	}
	survey_usage_any(r, c, &h, &us);
	if (jm)
		slurm_free_job_info_msg(jm);
	slurm_free_node_info_msg(nm);
	(void) write_all(fd, &h, sizeof(h));
	(void) write_all(fd, mine, h.jp.n_jobs * sizeof(*mine));
	if (h.n_usage)
		(void) write_all(fd, us, h.n_usage * sizeof(*us));
	if (h.jp.n_busy)
		(void) write_all(fd, busy, h.jp.n_busy * sizeof(*busy));
	if (h.jp.n_copies)
		(void) write_all(fd, copies, h.jp.n_copies * sizeof(*copies));
	if (h.jp.n_alive)
		(void) write_all(fd, alive, h.jp.n_alive * sizeof(*alive));
	if (h.jp.n_cancelled)
		(void) write_all(fd, cancelled,
				 h.jp.n_cancelled * sizeof(*cancelled));
	free(mine);
	free(busy);
	free(copies);
	free(alive);
	free(cancelled);
	free(us);
}

/* ---- 2. plans ------------------------------------------------------- */

bool eligible(const ad_job_t *j, const char *cluster)
{
	const char *p;
	size_t n = strlen(cluster);

	/* a re-auction: the winner that did not start it bids no more */
	if (j->act == POL_FED_HOLD_REAUCTION &&
	    !strcmp(j->pin_cluster, cluster))
		return false;
	if (!j->viable[0])
		return true;
	for (p = j->viable; (p = strstr(p, cluster)); p += n)
		if ((p == j->viable || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

static char *nz(char *s)
{
	return s[0] ? s : NULL;
}

static void desc_from_job(job_desc_msg_t *d, ad_job_t *j, char *admin)
{
	slurm_init_job_desc_msg(d);
	d->name = plan_name;
	d->user_id = j->user_id;
	d->group_id = j->group_id;
	d->account = nz(j->account);
	d->partition = nz(j->partition);
	d->qos = nz(j->qos);
	d->min_nodes = j->num_nodes ? j->num_nodes : 1;
	if (j->max_nodes)
		d->max_nodes = j->max_nodes;
	if (j->num_tasks && j->num_tasks != NO_VAL)
		d->num_tasks = j->num_tasks;
	if (j->ntasks_per_node && j->ntasks_per_node != NO_VAL16)
		d->ntasks_per_node = j->ntasks_per_node;
	if (j->cpus_per_task && j->cpus_per_task != NO_VAL16)
		d->cpus_per_task = j->cpus_per_task;
	if (j->num_cpus && j->num_cpus != NO_VAL)
		d->min_cpus = j->num_cpus;
	if (j->pn_min_memory && j->pn_min_memory != NO_VAL64)
		d->pn_min_memory = j->pn_min_memory;
	d->tres_per_node = nz(j->tres_per_node);
	d->tres_per_job = nz(j->tres_per_job);
	d->tres_per_task = nz(j->tres_per_task);
	d->tres_per_socket = nz(j->tres_per_socket);
	d->cpus_per_tres = nz(j->cpus_per_tres);
	d->mem_per_tres = nz(j->mem_per_tres);
	d->features = nz(j->features);
	d->prefer = nz(j->prefer);
	if (j->time_limit && j->time_limit != NO_VAL)
		d->time_limit = j->time_limit;
	d->licenses = nz(j->licenses);
	d->reservation = nz(j->reservation);
	d->cluster_features = nz(j->cluster_features);
	d->network = nz(j->network);
	d->work_dir = j->work_dir[0] ? j->work_dir : root_dir;
	d->req_nodes = nz(j->req_nodes);
	d->exc_nodes = nz(j->exc_nodes);
	/* job_info's NO_VAL16 / 0 mean "not asked": desc's defaults */
	if (j->shared != NO_VAL16)
		d->shared = j->shared;
	if (j->contiguous && j->contiguous != NO_VAL16)
		d->contiguous = j->contiguous;
	if (j->core_spec != NO_VAL16)
		d->core_spec = j->core_spec;
	if (j->sockets_per_node && j->sockets_per_node != NO_VAL16)
		d->sockets_per_node = j->sockets_per_node;
	if (j->cores_per_socket && j->cores_per_socket != NO_VAL16)
		d->cores_per_socket = j->cores_per_socket;
	if (j->threads_per_core && j->threads_per_core != NO_VAL16)
		d->threads_per_core = j->threads_per_core;
	if (j->ntasks_per_socket && j->ntasks_per_socket != NO_VAL16)
		d->ntasks_per_socket = j->ntasks_per_socket;
	if (j->ntasks_per_core && j->ntasks_per_core != NO_VAL16)
		d->ntasks_per_core = j->ntasks_per_core;
	if (j->ntasks_per_tres && j->ntasks_per_tres != NO_VAL16)
		d->ntasks_per_tres = j->ntasks_per_tres;
	if (j->req_switch && j->req_switch != NO_VAL)
		d->req_switch = j->req_switch;
	if (j->wait4switch && j->wait4switch != NO_VAL)
		d->wait4switch = j->wait4switch;
	d->admin_comment = admin;
}

char *shape_key(const ad_job_t *j)
{
	char key[8192];

	snprintf(key, sizeof(key),
		 "%u|%u|%s|%s|%s|%u|%u|%u|%u|%u|%u|%lu|%s|%s|%s|%s|%s|%s|%s|%s|"
		 "%s|%s|%s|%s|%s|%s|%u|%u|%u|%u|%u|%u|%u|%u|%u|%u|%u",
		 j->user_id, j->group_id, j->account, j->partition, j->qos,
		 j->num_nodes, j->max_nodes, j->num_tasks, j->num_cpus,
		 j->cpus_per_task, j->time_limit,
		 (unsigned long) j->pn_min_memory, j->tres_per_node,
		 j->tres_per_job, j->tres_per_task, j->tres_per_socket,
		 j->cpus_per_tres, j->mem_per_tres, j->features, j->prefer,
		 j->licenses, j->reservation, j->cluster_features, j->network,
		 j->req_nodes, j->exc_nodes, j->shared, j->contiguous,
		 j->core_spec, j->sockets_per_node, j->cores_per_socket,
		 j->threads_per_core, j->ntasks_per_socket, j->ntasks_per_core,
		 j->ntasks_per_tres, j->req_switch, j->wait4switch);
	return strdup(key);
}

/* "gpu:a100:2(IDX:0-1),gpu:v100:0(IDX:N/A)": the GPUs in use (bit i:
 * GPU index i); without IDX, the lowest 'count' indices. */
static pol_gpumask_t gres_used_mask(const char *s)
{
	pol_gpumask_t used = 0;
	int v[POL_MAX_GPUS_PER_NODE];

	while (s && (s = strstr(s, "gpu"))) {
		const char *idx = strstr(s, "(IDX:"), *next = strstr(s, "),");
		int n;

		if (idx && (!next || idx < next)) {
			char ranges[256];
			size_t k = strcspn(idx + 5, ")");

			if (k >= sizeof(ranges))
				k = sizeof(ranges) - 1;
			memcpy(ranges, idx + 5, k);
			ranges[k] = '\0';
			n = strcmp(ranges, "N/A")
				    ? topo_parse_ranges(ranges, v,
							POL_MAX_GPUS_PER_NODE,
							POL_MAX_GPUS_PER_NODE)
				    : 0;
			for (int i = 0; i < n; i++)
				used |= (pol_gpumask_t) 1 << v[i];
		} else {
			n = gres_gpus(s);
			for (int i = 0; i < n && i < POL_MAX_GPUS_PER_NODE; i++)
				used |= (pol_gpumask_t) 1 << i;
		}
		s = next ? next + 2 : NULL;
	}
	return used;
}

/* The locality level the select wrapper's placer reaches for job j on
 * the will-run's planned nodes (pol_fed_plan_locality); -1 if unknown.
 * *n_nodes gets the number of planned nodes, *hw whether they all have
 * the features the job prefers (--prefer). */
static double plan_locality(const topo_model_t *model, const ad_job_t *j,
			    const char *node_list, const node_info_msg_t *nm,
			    const int *leaf, int *n_nodes, int *hw)
{
	pol_fed_plan_node_t *pn = NULL;
	agora_hostlist_t hl = node_list ? slurm_hostlist_create(node_list)
					: NULL;
	char *host;
	int n = 0, gang;
	double level = -1.0;

	*n_nodes = hl ? slurm_hostlist_count(hl) : 0;
	*hw = 1;
	if (!hl || !nm || *n_nodes <= 0 ||
	    !(pn = calloc(*n_nodes, sizeof(*pn))))
		goto out;
	while ((host = slurm_hostlist_shift(hl))) {
		for (uint32_t i = 0; i < nm->record_count && n < *n_nodes;
		     i++) {
			const node_info_t *ni = &nm->node_array[i];

			if (!ni->name || strcmp(ni->name, host))
				continue;
			if (!pol_fed_features_match(j->prefer,
						    ni->features_act
							    ? ni->features_act
							    : ni->features))
				*hw = 0;
			scopy(pn[n].name, host, sizeof(pn[n].name));
			pn[n].gpus = gres_gpus(ni->gres);
			pn[n].used = gres_used_mask(ni->gres_used);
			pn[n].leaf = leaf ? leaf[i] : 0;
			n++;
			break;
		}
		free(host);
	}
	/* a gang: GPUs per node on a fixed node count */
	gang = j->num_nodes > 1 && strstr(j->tres_per_node, "gpu") &&
			       j->gpus % j->num_nodes == 0
		       ? (int) j->num_nodes
		       : 0;
	if (n == *n_nodes && j->gpus > 0)
		level = pol_fed_plan_locality(model, pn, n, j->gpus, gang);
out:
	free(pn);
	if (hl)
		slurm_hostlist_destroy(hl);
	return level;
}

void plans_child(const ad_round_t *r, int c, int fd)
{
	char *admin = NULL, *plain = plan_mark;
	size_t alen;
	char **keys = calloc(r->n_jobs + 1, sizeof(char *));
	ad_plan_msg_t *res = calloc(r->n_jobs + 1, sizeof(*res));
	int n_keys = 0, asked = 0;
	bool usage_sent = false;
	node_info_msg_t *nm = NULL;
	int *leaf = NULL;

	alen = strlen(AGORA_FED_PLAN) + strlen(AGORA_FED_USAGE) +
	       (r->usage_text[c] ? strlen(r->usage_text[c]) : 0) + 1;
	admin = malloc(alen);
	snprintf(admin, alen, "%s%s%s", AGORA_FED_PLAN,
		 r->usage_text[c] ? AGORA_FED_USAGE : "",
		 r->usage_text[c] ? r->usage_text[c] : "");
	/* GPUs in use per node, for the plans' locality: read only if a
	 * will-run is sent here (kept answers carry their locality) */
	bool asks = r->n_jobs > 0 && !r->wr_act;

	for (int i = 0; !asks && i < r->n_jobs; i++)
		asks = r->wr_act[(size_t) i * r->n_clusters + c] ==
			       POL_FED_WILLRUN_ASK &&
		       pol_fed_hold_bids(r->jobs[i].act) &&
		       eligible(&r->jobs[i], r->clusters[c].name);
	if (asks && slurm_load_node(0, &nm, SHOW_ALL | SHOW_LOCAL))
		nm = NULL;
	leaf = leaf_map(nm);
	for (int i = 0; i < r->n_jobs; i++) {
		ad_plan_msg_t m = { .idx = (uint32_t) i, .locality = -1 };
		will_run_response_msg_t *resp = NULL;
		job_desc_msg_t d;
		const char *key = r->shape ? r->shape[i] : NULL;
		size_t at = (size_t) i * r->n_clusters + c;
		int k;

		if (!pol_fed_hold_bids(r->jobs[i].act) ||
		    !eligible(&r->jobs[i], r->clusters[c].name))
			continue;
		if (r->wr_act && r->wr_act[at] == POL_FED_WILLRUN_DEFER)
			continue; /* over this round's budget: no plan yet */
		if (r->wr_act && r->wr_act[at] == POL_FED_WILLRUN_REUSE) {
			m = r->wr_plan[at]; /* a kept answer that stands */
			m.idx = (uint32_t) i;
			(void) write_all(fd, &m, sizeof(m));
			continue;
		}
		if (r->jobs[i].too_long[0]) { /* refused, never truncated */
			pol_fed_willrun_refusal(r->jobs[i].too_long, m.err,
						sizeof(m.err));
			(void) write_all(fd, &m, sizeof(m));
			continue;
		}
		for (k = 0; key && k < n_keys; k++)
			if (keys[k] && !strcmp(keys[k], key))
				break;
		if (key && k < n_keys) { /* same shape asked this round */
			m = res[k];
			m.idx = (uint32_t) i;
			(void) write_all(fd, &m, sizeof(m));
			continue;
		}
		desc_from_job(&d, &r->jobs[i], usage_sent ? plain : admin);
		usage_sent = true;
		asked++;
		if (slurm_job_will_run2(&d, &resp) || !resp) {
			m.valid = 0;
			snprintf(m.err, sizeof(m.err), "%s",
				 slurm_strerror(slurm_get_errno()));
		} else {
			m.valid = 1;
			m.start = resp->start_time;
			m.n_preempt = resp->preemptee_job_id
					      ? slurm_list_count(
							resp->preemptee_job_id)
					      : 0;
			m.locality = plan_locality(r->model, &r->jobs[i],
						   resp->node_list, nm, leaf,
						   &m.n_nodes, &m.hw_match);
		}
		if (resp)
			slurm_free_will_run_response_msg(resp);
		if (key) {
			keys[n_keys] = strdup(key);
			res[n_keys++] = m;
		}
		(void) write_all(fd, &m, sizeof(m));
	}
	if (!usage_sent && r->clusters[c].heartbeat) {
		/* nothing to ask: a request anyway, so that job_submit/agora
		 * knows agorad is alive and gets the federation's usage */
		job_desc_msg_t d;
		will_run_response_msg_t *resp = NULL;

		slurm_init_job_desc_msg(&d);
		d.name = heartbeat_name;
		d.user_id = getuid();
		d.group_id = getgid();
		d.min_nodes = 1;
		d.time_limit = 1;
		d.admin_comment = admin;
		if (!slurm_job_will_run2(&d, &resp) && resp)
			slurm_free_will_run_response_msg(resp);
	}
	ad_debug("%s: %d will-run requests for %d jobs", r->clusters[c].name,
		 asked, r->n_jobs);
	for (int k = 0; k < n_keys; k++)
		free(keys[k]);
	free(keys);
	free(res);
	free(admin);
	free(leaf);
	if (nm)
		slurm_free_node_info_msg(nm);
}
