/*
 * agorad_round.c - one auction round over the federation.
 *
 *   0. the federation's clusters, from slurmdbd (slurmdb_get_info_cluster);
 *      the last list is kept while slurmdbd is down
 *   1. survey, one process per cluster, in parallel: the jobs that
 *      job_submit/agora holds at that origin, free/total GPUs, pending GPU
 *      demand, and the usage per app that slurmctld/agora publishes
 *   2. plans, one process per cluster, in parallel: Slurm's will-run of
 *      each held job on that cluster (start, nodes, preempted jobs); the
 *      first request carries the other clusters' usage per app (the
 *      credit term's federation-wide usage) and tells job_submit/agora
 *      that agorad is alive
 *   3. the core's batched auction (pol_fed_auction): every held job of the
 *      federation is decided in one call
 *   4. pins, one process per origin, in parallel: Clusters=<winner> with
 *      the decision in the AdminComment, then the release, then the
 *      AdminComment again (Slurm forwards updates to the active sibling
 *      copy, which now exists), so the SystemComment that
 *      site_factor/agora copies from it is shown on every cluster
 *
 * One process per cluster because libslurm's target cluster
 * (working_cluster_rec) is process-global.  Children report through pipes
 * in fixed-size records; a child that does not finish within its limit
 * is killed and its cluster counts as down for the round.
 *
 * Crash safety: agorad keeps nothing between rounds that Slurm does not
 * show.  Killed after step 4's first update, the job is pinned but still
 * held: the next round sees it held (viable now only the winner) and
 * releases it there.  A pin is one Slurm update of one job, and Slurm's
 * federation lets only one sibling copy start: no job runs twice.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "agora_fed_marks.h"
#include "agora_file.h"
#include "agorad.h"
#include "pol_fed.h"

/* exported by libslurm, not declared in its public headers */
extern void slurm_free_will_run_response_msg(will_run_response_msg_t *msg);

#define AD_NAME          64
#define AD_STR           256
#define AD_MAX_CLUSTERS  64
#define AD_CHILD_LIMIT_S 30

/* libslurm's job_desc_msg_t takes char *, not const char * */
static char plan_name[] = "agora-plan";
static char heartbeat_name[] = "agora-heartbeat";
static char plan_mark[] = AGORA_FED_PLAN;

/* Items of slurmctld_plugstack_conf (Slurm 22.05 read_config.h layout,
 * as agoractl reads them). */
typedef struct {
	char *name;
	char *value;
} ad_pair_t;
typedef struct {
	char *name;
	List key_pairs;
} ad_plugin_params_t;

typedef struct ad_cluster {
	char name[AD_NAME];
	slurmdb_cluster_rec_t *rec;
	bool up;
	int gpus_total, gpus_free, gpus_pending, gpus_per_node, n_nodes;
} ad_cluster_t;

typedef struct ad_job {
	uint32_t job_id, user_id, group_id, num_nodes, max_nodes, num_tasks,
		num_cpus, time_limit;
	uint16_t cpus_per_task, ntasks_per_node;
	uint64_t pn_min_memory;
	int gpus;
	int64_t submit;
	char origin[AD_NAME], account[AD_NAME], partition[AD_NAME],
		qos[AD_NAME], dataset[AD_NAME];
	char tres_per_node[AD_STR], tres_per_job[AD_STR], tres_per_task[AD_STR],
		tres_per_socket[AD_STR], cpus_per_tres[AD_STR],
		mem_per_tres[AD_STR], features[AD_STR], viable[AD_STR];
} ad_job_t;

typedef struct {
	int ok;
	int gpus_total, gpus_free, gpus_pending, gpus_per_node, n_nodes;
	int n_jobs, n_usage;
	char err[128];
} ad_survey_hdr_t;

typedef struct {
	char app[AD_NAME];
	double usage, quota;
} ad_usage_t;

typedef struct {
	uint32_t idx;
	int valid;
	int64_t start;
	int n_preempt, n_nodes;
	char err[96];
} ad_plan_msg_t;

typedef struct {
	uint32_t idx;
	int rc; /* 0 pinned and released; else the Slurm error */
	int step;
} ad_pin_msg_t;

/* ---- state kept between rounds (only what Slurm does not show) ----- */
static ad_cluster_t clusters[AD_MAX_CLUSTERS];
static int n_clusters = 0;
static List cluster_list = NULL; /* owns the records */
static char fed_name[AD_NAME] = "";

/* ---- per round ------------------------------------------------------ */
static ad_job_t *jobs = NULL;
static int n_jobs = 0;
static ad_usage_t *usage[AD_MAX_CLUSTERS];
static int n_usage[AD_MAX_CLUSTERS];
static char *usage_text[AD_MAX_CLUSTERS]; /* payload for cluster c */
static pol_fed_award_t *awards = NULL;
static char **decision = NULL; /* AdminComment text per job */
static int *winner_cluster = NULL;

static double now_s(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Copy src into dst[size], cut if longer. */
static void scopy(char *dst, const char *src, size_t size)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

static int cluster_index(const char *name)
{
	for (int c = 0; c < n_clusters; c++)
		if (!strcmp(clusters[c].name, name))
			return c;
	return -1;
}

/* ---- 0. the federation ---------------------------------------------- */

static int refresh_clusters(void)
{
	List l = slurmdb_get_info_cluster(NULL);
	ListIterator it;
	slurmdb_cluster_rec_t *r;
	char best[AD_NAME] = "";
	int best_n = 0;

	static bool dbd_down = false;

	if (!l) {
		if (n_clusters) {
			if (!dbd_down)
				ad_error(
					"slurmdbd does not answer: keeping the last list of %d clusters",
					n_clusters);
			dbd_down = true;
			return 0;
		}
		ad_error("cannot read the clusters from slurmdbd: %s",
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	/* the federation with the most member clusters (one per site) */
	it = slurm_list_iterator_create(l);
	while ((r = slurm_list_next(it))) {
		ListIterator it2;
		slurmdb_cluster_rec_t *r2;
		int n = 0;

		if (!r->fed.name || !r->fed.name[0])
			continue;
		it2 = slurm_list_iterator_create(l);
		while ((r2 = slurm_list_next(it2)))
			if (r2->fed.name && !strcmp(r2->fed.name, r->fed.name))
				n++;
		slurm_list_iterator_destroy(it2);
		if (n > best_n) {
			best_n = n;
			scopy(best, r->fed.name, sizeof(best));
		}
	}
	slurm_list_iterator_destroy(it);
	if (dbd_down)
		ad_info("slurmdbd answers again");
	dbd_down = false;
	if (!best_n) {
		ad_error("slurmdbd knows no federation: nothing to auction");
		slurm_list_destroy(l);
		return -1;
	}
	if (strcmp(best, fed_name))
		ad_info("federation %s: %d clusters", best, best_n);
	scopy(fed_name, best, sizeof(fed_name));
	bool was_up[AD_MAX_CLUSTERS] = { false };
	char old_names[AD_MAX_CLUSTERS][AD_NAME];
	int n_old = n_clusters;

	for (int c = 0; c < n_old; c++) {
		was_up[c] = clusters[c].up;
		memcpy(old_names[c], clusters[c].name, AD_NAME);
	}
	n_clusters = 0;
	it = slurm_list_iterator_create(l);
	while ((r = slurm_list_next(it)) && n_clusters < AD_MAX_CLUSTERS) {
		ad_cluster_t *c;

		if (!r->fed.name || strcmp(r->fed.name, fed_name))
			continue;
		if ((r->fed.state & CLUSTER_FED_STATE_BASE) !=
			    CLUSTER_FED_STATE_ACTIVE ||
		    (r->fed.state & CLUSTER_FED_STATE_DRAIN))
			continue; /* not taking new jobs */
		c = &clusters[n_clusters++];
		memset(c, 0, sizeof(*c));
		scopy(c->name, r->name, sizeof(c->name));
		c->rec = r;
		for (int o = 0; o < n_old; o++)
			if (!strcmp(old_names[o], c->name))
				c->up = was_up[o];
	}
	slurm_list_iterator_destroy(it);
	if (cluster_list)
		slurm_list_destroy(cluster_list);
	cluster_list = l;
	return 0;
}

/* ---- children ------------------------------------------------------- */

typedef void (*child_fn)(int c, int fd);

static int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= w;
	}
	return 0;
}

/* Run fn(c, fd) in one child per cluster with want[c]; collect what each
 * wrote into out[c] (malloc'ed) / len[c].  Children past the limit are
 * killed (SIGKILL to that pid) and give no output. */
static void run_children(const bool *want, child_fn fn, char **out, size_t *len,
			 int limit_s, volatile int *stop)
{
	pid_t pid[AD_MAX_CLUSTERS];
	int fd[AD_MAX_CLUSTERS], open_n = 0;
	size_t cap[AD_MAX_CLUSTERS];
	double deadline = now_s() + limit_s;

	for (int c = 0; c < n_clusters; c++) {
		int p[2];

		pid[c] = -1;
		fd[c] = -1;
		out[c] = NULL;
		len[c] = cap[c] = 0;
		if (!want[c])
			continue;
		if (pipe(p)) {
			ad_error("pipe: %s", strerror(errno));
			continue;
		}
		pid[c] = fork();
		if (pid[c] < 0) {
			ad_error("fork: %s", strerror(errno));
			close(p[0]);
			close(p[1]);
			continue;
		}
		if (pid[c] == 0) {
			close(p[0]);
			for (int o = 0; o < c; o++)
				if (fd[o] >= 0)
					close(fd[o]);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGHUP, SIG_IGN);
			working_cluster_rec = clusters[c].rec;
			fn(c, p[1]);
			close(p[1]);
			_exit(0);
		}
		close(p[1]);
		fd[c] = p[0];
		open_n++;
	}
	while (open_n > 0) {
		struct pollfd pfd[AD_MAX_CLUSTERS];
		int map[AD_MAX_CLUSTERS], n = 0, ms;

		for (int c = 0; c < n_clusters; c++)
			if (fd[c] >= 0) {
				pfd[n].fd = fd[c];
				pfd[n].events = POLLIN;
				map[n++] = c;
			}
		ms = (int) ((deadline - now_s()) * 1000);
		if (ms <= 0 || (stop && *stop && ms > 5000))
			ms = 0;
		if (ms == 0 || poll(pfd, n, ms) == 0) {
			for (int i = 0; i < n; i++) {
				int c = map[i];

				ad_error(
					"%s: no answer within %d s: counted as down this round",
					clusters[c].name, limit_s);
				kill(pid[c], SIGKILL);
				close(fd[c]);
				fd[c] = -1;
				free(out[c]);
				out[c] = NULL;
				len[c] = 0;
				open_n--;
			}
			break;
		}
		for (int i = 0; i < n; i++) {
			int c = map[i];
			ssize_t r;

			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (cap[c] - len[c] < 65536) {
				char *nb;

				cap[c] = cap[c] ? cap[c] * 2 : 131072;
				nb = realloc(out[c], cap[c]);
				if (!nb) {
					ad_error("out of memory");
					exit(1);
				}
				out[c] = nb;
			}
			r = read(fd[c], out[c] + len[c], cap[c] - len[c]);
			if (r > 0) {
				len[c] += r;
			} else if (r == 0 || errno != EINTR) {
				close(fd[c]);
				fd[c] = -1;
				open_n--;
			}
		}
	}
	for (int c = 0; c < n_clusters; c++)
		if (pid[c] > 0)
			while (waitpid(pid[c], NULL, 0) < 0 && errno == EINTR)
				;
}

/* ---- 1. survey ------------------------------------------------------ */

/* "gpu:8", "gpu:a100:8(S:0-1)", "gpu:3(IDX:0-2)": the GPU count */
static int gres_gpus(const char *s)
{
	int total = 0;

	while (s && (s = strstr(s, "gpu"))) {
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

static void comment_dataset(const char *comment, char *out, size_t size)
{
	const char *p = comment ? strstr(comment, "dataset=") : NULL;
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen("dataset=");
	while (p[n] && p[n] != ' ' && p[n] != ',' && p[n] != ';' &&
	       n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

static void survey_child(int c, int fd)
{
	ad_survey_hdr_t h = { 0 };
	job_info_msg_t *jm = NULL;
	node_info_msg_t *nm = NULL;
	slurm_conf_t *cf = NULL;
	ad_job_t *mine = NULL;
	ad_usage_t *us = NULL;
	const char *me = clusters[c].name;

	if (slurm_load_jobs(0, &jm, SHOW_ALL | SHOW_LOCAL) ||
	    slurm_load_node(0, &nm, SHOW_ALL | SHOW_LOCAL)) {
		snprintf(h.err, sizeof(h.err), "%s",
			 slurm_strerror(slurm_get_errno()));
		(void) write_all(fd, &h, sizeof(h));
		return;
	}
	h.ok = 1;
	mine = calloc(jm->record_count + 1, sizeof(*mine));
	for (uint32_t i = 0; i < jm->record_count; i++) {
		slurm_job_info_t *j = &jm->job_array[i];
		ad_job_t *a;

		if ((j->job_state & JOB_STATE_BASE) != JOB_PENDING ||
		    (j->job_state & JOB_REVOKED))
			continue;
		h.gpus_pending += tres_gpus(j->tres_req_str);
		if (j->priority != 0 || !j->admin_comment ||
		    strncmp(j->admin_comment, AGORA_FED_HOLD,
			    strlen(AGORA_FED_HOLD)) ||
		    (j->fed_origin_str && strcmp(j->fed_origin_str, me)))
			continue;
		a = &mine[h.n_jobs++];
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
		scopy(a->origin, me, sizeof(a->origin));
		scopy(a->account, j->account, sizeof(a->account));
		scopy(a->partition, j->partition, sizeof(a->partition));
		scopy(a->qos, j->qos, sizeof(a->qos));
		scopy(a->tres_per_node, j->tres_per_node,
		      sizeof(a->tres_per_node));
		scopy(a->tres_per_job, j->tres_per_job,
		      sizeof(a->tres_per_job));
		scopy(a->tres_per_task, j->tres_per_task,
		      sizeof(a->tres_per_task));
		scopy(a->tres_per_socket, j->tres_per_socket,
		      sizeof(a->tres_per_socket));
		scopy(a->cpus_per_tres, j->cpus_per_tres,
		      sizeof(a->cpus_per_tres));
		scopy(a->mem_per_tres, j->mem_per_tres,
		      sizeof(a->mem_per_tres));
		scopy(a->features, j->features, sizeof(a->features));
		scopy(a->viable, j->fed_siblings_viable_str, sizeof(a->viable));
		comment_dataset(j->comment, a->dataset, sizeof(a->dataset));
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
	/* usage per app, as slurmctld/agora publishes it */
	if (!slurm_load_ctl_conf(0, &cf) && cf->slurmctld_plugstack_conf) {
		ListIterator it = slurm_list_iterator_create(
			cf->slurmctld_plugstack_conf);
		ad_plugin_params_t *pp;
		int cap = 0;

		while ((pp = slurm_list_next(it))) {
			ListIterator kit;
			ad_pair_t *kp;

			if (!pp->name || strcmp(pp->name, "slurmctld/agora"))
				continue;
			kit = slurm_list_iterator_create(pp->key_pairs);
			while ((kp = slurm_list_next(kit))) {
				const char *u, *q;
				size_t nl;

				if (!kp->name ||
				    strncmp(kp->name, "Credit[", 7) ||
				    !kp->value)
					continue;
				nl = strlen(kp->name);
				if (nl < 9 || kp->name[nl - 1] != ']')
					continue;
				if (h.n_usage == cap) {
					cap = cap ? 2 * cap : 16;
					us = realloc(us, cap * sizeof(*us));
				}
				memset(&us[h.n_usage], 0, sizeof(*us));
				snprintf(us[h.n_usage].app, AD_NAME, "%.*s",
					 (int) (nl - 8), kp->name + 7);
				u = strstr(kp->value, "usage=");
				q = strstr(kp->value, "quota=");
				us[h.n_usage].usage = u ? atof(u + 6) : 0;
				us[h.n_usage].quota = q ? atof(q + 6) : 0;
				h.n_usage++;
			}
			slurm_list_iterator_destroy(kit);
		}
		slurm_list_iterator_destroy(it);
	}
	if (cf)
		slurm_free_ctl_conf(cf);
	slurm_free_job_info_msg(jm);
	slurm_free_node_info_msg(nm);
	(void) write_all(fd, &h, sizeof(h));
	(void) write_all(fd, mine, h.n_jobs * sizeof(*mine));
	if (h.n_usage)
		(void) write_all(fd, us, h.n_usage * sizeof(*us));
	free(mine);
	free(us);
}

/* ---- 2. plans ------------------------------------------------------- */

static bool eligible(const ad_job_t *j, const char *cluster)
{
	const char *p;
	size_t n = strlen(cluster);

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
	if (j->time_limit && j->time_limit != NO_VAL)
		d->time_limit = j->time_limit;
	d->admin_comment = admin;
}

/* The shape of a request: jobs of one shape get one will-run each. */
static void shape_key(const ad_job_t *j, char *key, size_t size)
{
	snprintf(key, size,
		 "%u|%u|%s|%s|%s|%u|%u|%u|%u|%u|%u|%lu|%s|%s|%s|%s|%s|%s|%s",
		 j->user_id, j->group_id, j->account, j->partition, j->qos,
		 j->num_nodes, j->max_nodes, j->num_tasks, j->num_cpus,
		 j->cpus_per_task, j->time_limit,
		 (unsigned long) j->pn_min_memory, j->tres_per_node,
		 j->tres_per_job, j->tres_per_task, j->tres_per_socket,
		 j->cpus_per_tres, j->mem_per_tres, j->features);
}

static void plans_child(int c, int fd)
{
	char *admin = NULL, *plain = plan_mark;
	size_t alen;
	char **keys = calloc(n_jobs + 1, sizeof(char *));
	ad_plan_msg_t *res = calloc(n_jobs + 1, sizeof(*res));
	int n_keys = 0, asked = 0;
	bool usage_sent = false;

	alen = strlen(AGORA_FED_PLAN) + strlen(AGORA_FED_USAGE) +
	       (usage_text[c] ? strlen(usage_text[c]) : 0) + 1;
	admin = malloc(alen);
	snprintf(admin, alen, "%s%s%s", AGORA_FED_PLAN,
		 usage_text[c] ? AGORA_FED_USAGE : "",
		 usage_text[c] ? usage_text[c] : "");
	for (int i = 0; i < n_jobs; i++) {
		ad_plan_msg_t m = { .idx = (uint32_t) i };
		will_run_response_msg_t *resp = NULL;
		job_desc_msg_t d;
		char key[2048];
		int k;

		if (!eligible(&jobs[i], clusters[c].name))
			continue;
		shape_key(&jobs[i], key, sizeof(key));
		for (k = 0; k < n_keys; k++)
			if (!strcmp(keys[k], key))
				break;
		if (k < n_keys) { /* same shape asked already this round */
			m = res[k];
			m.idx = (uint32_t) i;
			(void) write_all(fd, &m, sizeof(m));
			continue;
		}
		desc_from_job(&d, &jobs[i], usage_sent ? plain : admin);
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
			if (resp->node_list) {
				hostlist_t hl = slurm_hostlist_create(
					resp->node_list);

				m.n_nodes = hl ? slurm_hostlist_count(hl) : 0;
				if (hl)
					slurm_hostlist_destroy(hl);
			}
		}
		if (resp)
			slurm_free_will_run_response_msg(resp);
		keys[n_keys] = strdup(key);
		res[n_keys++] = m;
		(void) write_all(fd, &m, sizeof(m));
	}
	if (!usage_sent) {
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
	ad_debug("%s: %d will-run requests for %d jobs", clusters[c].name,
		 asked, n_jobs);
	for (int k = 0; k < n_keys; k++)
		free(keys[k]);
	free(keys);
	free(res);
	free(admin);
}

/* ---- 4. pins -------------------------------------------------------- */

static int update(job_desc_msg_t *d)
{
	int rc = slurm_update_job(d);

	return rc ? slurm_get_errno() : 0;
}

static void pins_child(int c, int fd)
{
	for (int i = 0; i < n_jobs; i++) {
		ad_pin_msg_t m = { .idx = (uint32_t) i };
		job_desc_msg_t d;
		int w = winner_cluster[i];

		if (w < 0 || strcmp(jobs[i].origin, clusters[c].name))
			continue;
		/* 1: pin while held (no sibling copy is submitted) */
		slurm_init_job_desc_msg(&d);
		d.job_id = jobs[i].job_id;
		d.clusters = clusters[w].name;
		d.admin_comment = decision[i];
		m.step = 1;
		if (!(m.rc = update(&d))) {
			/* 2: release: the origin submits to the winner only */
			slurm_init_job_desc_msg(&d);
			d.job_id = jobs[i].job_id;
			d.priority = INFINITE;
			m.step = 2;
			if (!(m.rc = update(&d)) && w != c) {
				/* 3: the decision again, now forwarded to the
				 * winner's copy */
				slurm_init_job_desc_msg(&d);
				d.job_id = jobs[i].job_id;
				d.admin_comment = decision[i];
				m.step = 3;
				m.rc = update(&d);
			}
		}
		(void) write_all(fd, &m, sizeof(m));
	}
}

/* ---- 3. the auction ------------------------------------------------- */

typedef struct {
	pol_fed_catalog_t cat;  /* sites: one per cluster, our order */
	pol_fed_catalog_t file; /* FedCatalog as parsed (owns datasets) */
	bool have_file;
	int *col_of_site; /* file site -> cluster index */
} ad_catalog_t;

static void catalog_free(ad_catalog_t *ac)
{
	free(ac->cat.sites);
	free(ac->cat.datasets);
	free(ac->col_of_site);
	if (ac->have_file)
		pol_fed_catalog_free(&ac->file);
	memset(ac, 0, sizeof(*ac));
}

/* The catalog with one site per cluster, in the clusters' order: the
 * datasets' replica bits are renumbered from the file's sites. */
static void catalog_build(const agora_conf_t *conf, ad_catalog_t *ac)
{
	memset(ac, 0, sizeof(*ac));
	if (conf->fed_catalog) {
		agora_err_t err = { { 0 } };
		char *text = NULL;
		size_t len = 0;

		if (agora_file_read_ex(conf->fed_catalog, 64 << 20,
				       AGORA_FILE_FOLLOW, &text, &len, NULL,
				       &err) < 0) {
			ad_error("%s; auctions go on without data locality",
				 err.text);
		} else if (pol_fed_catalog_parse(text, conf->fed_catalog,
						 &ac->file, &err)) {
			ad_error("%s; auctions go on without data locality",
				 err.text);
		} else {
			ac->have_file = true;
		}
		free(text);
	}
	ac->cat.n_sites = n_clusters;
	ac->cat.sites = calloc(n_clusters + 1, sizeof(pol_fed_site_t));
	for (int c = 0; c < n_clusters; c++) {
		int s = ac->have_file ? pol_fed_catalog_site(&ac->file,
							     clusters[c].name)
				      : -1;

		if (s >= 0)
			ac->cat.sites[c] = ac->file.sites[s];
		else {
			scopy(ac->cat.sites[c].name, clusters[c].name,
			      POL_FED_NAME_LEN);
			ac->cat.sites[c].link_bytes_per_s = 1e9;
		}
	}
	if (!ac->have_file)
		return;
	ac->cat.n_datasets = ac->file.n_datasets;
	ac->cat.datasets = calloc(ac->file.n_datasets + 1,
				  sizeof(pol_fed_dataset_t));
	for (int d = 0; d < ac->file.n_datasets; d++) {
		pol_fed_dataset_t *ds = &ac->cat.datasets[d];

		*ds = ac->file.datasets[d];
		ds->where = 0;
		for (int s = 0; s < ac->file.n_sites && s < 64; s++) {
			int c;

			if (!(ac->file.datasets[d].where & (1ULL << s)))
				continue;
			c = cluster_index(ac->file.sites[s].name);
			if (c >= 0)
				ds->where |= 1ULL << c;
		}
	}
}

/* The team's credit fraction over the whole federation. */
static double fed_credit(const char *team)
{
	double used = 0, quota = 0;

	for (int c = 0; c < n_clusters; c++)
		for (int u = 0; u < n_usage[c]; u++)
			if (!strcmp(usage[c][u].app, team)) {
				used += usage[c][u].usage;
				if (usage[c][u].quota > quota)
					quota = usage[c][u].quota;
			}
	if (quota <= 0)
		return 1.0;
	return fmax(-1.0, fmin(1.0, (quota - used) / quota));
}

/* usage_text[c]: the GPU-hours of every app on the other clusters */
static void build_usage_texts(void)
{
	for (int c = 0; c < n_clusters; c++) {
		size_t cap = 256, len = 0;
		char *t = malloc(cap);

		t[0] = '\0';
		for (int o = 0; o < n_clusters; o++)
			for (int u = 0; o != c && u < n_usage[o]; u++) {
				const char *app = usage[o][u].app;
				double sum = 0;
				bool seen = false;

				/* once per app: at its first cluster */
				for (int p = 0; p < o && !seen; p++)
					for (int v = 0; v < n_usage[p]; v++)
						if (p != c &&
						    !strcmp(usage[p][v].app,
							    app))
							seen = true;
				for (int v = 0; v < u && !seen; v++)
					if (!strcmp(usage[o][v].app, app))
						seen = true;
				if (seen)
					continue;
				for (int p = 0; p < n_clusters; p++)
					for (int v = 0;
					     p != c && v < n_usage[p]; v++)
						if (!strcmp(usage[p][v].app,
							    app))
							sum += usage[p][v]
								       .usage;
				if (len + strlen(app) + 40 > cap) {
					cap = 2 * cap + strlen(app) + 40;
					t = realloc(t, cap);
				}
				len += snprintf(t + len, cap - len, "%s%s:%.3f",
						len ? "," : "", app, sum);
			}
		free(usage_text[c]);
		usage_text[c] = len ? t : NULL;
		if (!len)
			free(t);
	}
}

/* ---- the state file agoractl fed / explain read --------------------- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char) *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void write_state(const char *path, time_t now, double secs,
			const int *pinned_rc)
{
	char tmp[4096];
	FILE *f;

	if (!path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (!(f = fopen(tmp, "w"))) {
		ad_error("%s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "{\"time\":%ld,\"round_s\":%.3f,\"federation\":", (long) now,
		secs);
	json_str(f, fed_name);
	fprintf(f, ",\"clusters\":[");
	for (int c = 0; c < n_clusters; c++) {
		fprintf(f, "%s{\"name\":", c ? "," : "");
		json_str(f, clusters[c].name);
		fprintf(f,
			",\"up\":%s,\"nodes\":%d,\"gpus_total\":%d,\"gpus_free\":%d,\"gpus_pending\":%d}",
			clusters[c].up ? "true" : "false", clusters[c].n_nodes,
			clusters[c].gpus_total, clusters[c].gpus_free,
			clusters[c].gpus_pending);
	}
	fprintf(f, "],\"jobs\":[");
	for (int i = 0; i < n_jobs; i++) {
		fprintf(f, "%s{\"job_id\":%u,\"origin\":", i ? "," : "",
			jobs[i].job_id);
		json_str(f, jobs[i].origin);
		fprintf(f, ",\"winner\":");
		json_str(f, winner_cluster[i] >= 0
				    ? clusters[winner_cluster[i]].name
				    : "");
		fprintf(f, ",\"pinned\":%s,\"decision\":",
			pinned_rc[i] == 0 ? "true" : "false");
		json_str(f, decision[i]);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	if (fflush(f) || fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		return;
	}
	fclose(f);
	if (rename(tmp, path))
		ad_error("%s: %s", path, strerror(errno));
}

/* ---- the round ------------------------------------------------------ */

static void round_reset(void)
{
	for (int c = 0; c < AD_MAX_CLUSTERS; c++) {
		free(usage[c]);
		usage[c] = NULL;
		n_usage[c] = 0;
	}
	for (int i = 0; decision && i < n_jobs; i++)
		free(decision[i]);
	free(decision);
	decision = NULL;
	free(jobs);
	jobs = NULL;
	free(awards);
	awards = NULL;
	free(winner_cluster);
	winner_cluster = NULL;
	n_jobs = 0;
}

int ad_round(const agora_conf_t *conf, const char *state_path, ad_stats_t *st,
	     volatile int *stop)
{
	bool want[AD_MAX_CLUSTERS];
	char *out[AD_MAX_CLUSTERS];
	size_t len[AD_MAX_CLUSTERS];
	pol_fed_job_t *pj = NULL;
	pol_fed_plan_t *plans = NULL;
	pol_fed_weights_t w;
	ad_catalog_t ac;
	int free_gpus[AD_MAX_CLUSTERS], *pin_rc = NULL;
	int pinned = 0, failed = 0, no_plan = 0, n_up = 0;
	time_t now = time(NULL);
	double t0 = now_s(), t_survey, t_plans, t_auction;

	round_reset();
	if (refresh_clusters())
		return -1;
	st->rounds++;

	/* 1. survey */
	for (int c = 0; c < n_clusters; c++)
		want[c] = true;
	run_children(want, survey_child, out, len, AD_CHILD_LIMIT_S, stop);
	for (int c = 0; c < n_clusters; c++) {
		ad_survey_hdr_t h;
		bool was_up = clusters[c].up;

		clusters[c].up = false;
		if (len[c] < sizeof(h)) {
			if (was_up || st->rounds == 1)
				ad_error("%s: no survey: its bids are skipped",
					 clusters[c].name);
			free(out[c]);
			continue;
		}
		memcpy(&h, out[c], sizeof(h));
		if (!h.ok || len[c] != sizeof(h) + h.n_jobs * sizeof(ad_job_t) +
					       h.n_usage * sizeof(ad_usage_t)) {
			if (was_up || st->rounds == 1)
				ad_error(
					"%s: cannot reach slurmctld (%s): its bids are skipped",
					clusters[c].name,
					h.ok ? "short answer" : h.err);
			free(out[c]);
			continue;
		}
		if (!was_up && st->rounds > 1)
			ad_info("%s: answers again", clusters[c].name);
		clusters[c].up = true;
		n_up++;
		clusters[c].gpus_total = h.gpus_total;
		clusters[c].gpus_free = h.gpus_free;
		clusters[c].gpus_pending = h.gpus_pending;
		clusters[c].gpus_per_node = h.gpus_per_node;
		clusters[c].n_nodes = h.n_nodes;
		if (h.n_jobs) {
			jobs = realloc(jobs,
				       (n_jobs + h.n_jobs) * sizeof(*jobs));
			memcpy(jobs + n_jobs, out[c] + sizeof(h),
			       h.n_jobs * sizeof(ad_job_t));
			n_jobs += h.n_jobs;
		}
		if (h.n_usage) {
			usage[c] = malloc(h.n_usage * sizeof(ad_usage_t));
			memcpy(usage[c],
			       out[c] + sizeof(h) + h.n_jobs * sizeof(ad_job_t),
			       h.n_usage * sizeof(ad_usage_t));
			n_usage[c] = h.n_usage;
		}
		free(out[c]);
	}
	t_survey = now_s();
	if (!n_up) {
		ad_error("no cluster of federation %s answers", fed_name);
		return -1;
	}
	build_usage_texts();

	/* 2. plans (also the heartbeat when there is nothing to plan) */
	plans = calloc((size_t) (n_jobs + 1) * n_clusters, sizeof(*plans));
	for (int c = 0; c < n_clusters; c++)
		want[c] = clusters[c].up;
	run_children(want, plans_child, out, len, AD_CHILD_LIMIT_S, stop);
	for (int c = 0; c < n_clusters; c++) {
		size_t n = len[c] / sizeof(ad_plan_msg_t);

		for (size_t k = 0; k < n; k++) {
			ad_plan_msg_t m;
			pol_fed_plan_t *p;

			memcpy(&m, out[c] + k * sizeof(m), sizeof(m));
			if (m.idx >= (uint32_t) n_jobs)
				continue;
			p = &plans[(size_t) m.idx * n_clusters + c];
			p->valid = m.valid;
			p->start = m.start < now ? now : m.start;
			p->n_preempt = m.n_preempt;
			p->locality = -1;
			if (m.valid && clusters[c].gpus_per_node > 0 &&
			    m.n_nodes > 0) {
				int need = (jobs[m.idx].gpus +
					    clusters[c].gpus_per_node - 1) /
					   clusters[c].gpus_per_node;

				/* one node: NVLink-level; the fewest nodes:
				 * across nodes; more: fragmented */
				p->locality = m.n_nodes == 1      ? 0
					      : m.n_nodes <= need ? 4
								  : 4.5;
			}
			if (!m.valid)
				ad_debug("JobId=%u on %s: no plan: %s",
					 jobs[m.idx].job_id, clusters[c].name,
					 m.err);
		}
		free(out[c]);
	}
	t_plans = now_s();
	if (!n_jobs) {
		write_state(state_path, now, now_s() - t0, NULL);
		free(plans);
		return 0;
	}

	/* 3. the auction */
	catalog_build(conf, &ac);
	pj = calloc(n_jobs, sizeof(*pj));
	for (int i = 0; i < n_jobs; i++) {
		pj[i].id = jobs[i].job_id;
		scopy(pj[i].team, jobs[i].account, POL_FED_NAME_LEN);
		pj[i].gpus = jobs[i].gpus;
		pj[i].dataset = jobs[i].dataset[0]
					? pol_fed_catalog_dataset(
						  &ac.cat, jobs[i].dataset)
					: -1;
		pj[i].submit = jobs[i].submit;
		pj[i].priority = 0;
		for (int c = 0; c < n_clusters; c++)
			if (eligible(&jobs[i], clusters[c].name))
				pj[i].eligible |= 1ULL << c;
		pj[i].hw_match = pj[i].eligible;
		for (int c = 0; c < n_clusters; c++)
			plans[(size_t) i * n_clusters + c].team_credit =
				fed_credit(jobs[i].account);
	}
	for (int c = 0; c < n_clusters; c++)
		free_gpus[c] = clusters[c].up ? clusters[c].gpus_free : 0;
	pol_fed_weights_default(&w);
	awards = calloc(n_jobs, sizeof(*awards));
	decision = calloc(n_jobs, sizeof(char *));
	winner_cluster = calloc(n_jobs, sizeof(int));
	pin_rc = calloc(n_jobs, sizeof(int));
	if (pol_fed_auction(&w, &ac.cat, pj, n_jobs, plans, n_clusters,
			    free_gpus, now, awards)) {
		ad_error("the auction failed (%s): jobs stay held this round",
			 strerror(errno));
		catalog_free(&ac);
		free(pj);
		free(plans);
		free(pin_rc);
		return -1;
	}
	/* awards come in the jobs' order */
	for (int i = 0; i < n_jobs; i++) {
		pol_fed_award_t *a = &awards[i];
		size_t cap = 2048, l;
		char *t = malloc(cap);

		winner_cluster[i] = a->cluster;
		pin_rc[i] = -1;
		if (a->cluster < 0) {
			l = snprintf(t, cap,
				     "%sno cluster can run it now; held",
				     AGORA_FED_WON);
		} else {
			l = snprintf(
				t, cap,
				"%swon by %s (cost %.0f s; runner-up %s): %s. Bids:",
				AGORA_FED_WON, clusters[a->cluster].name,
				a->cost, isfinite(a->second) ? "" : "none",
				a->why);
			if (isfinite(a->second)) {
				/* put the runner-up's cost in the text */
				char *p = strstr(t, "runner-up ");

				if (p) {
					char buf[64];

					snprintf(buf, sizeof(buf),
						 "runner-up %.0f s)",
						 a->second);
					l = (p - t) +
					    snprintf(p, cap - (p - t),
						     "%s: %s. Bids:", buf,
						     a->why);
				}
			}
		}
		for (int c = 0; c < n_clusters && a->cluster >= 0; c++) {
			char why[POL_FED_WHY_LEN];
			const pol_fed_plan_t *p =
				&plans[(size_t) i * n_clusters + c];
			double cost;

			if (!(pj[i].eligible & (1ULL << c)))
				continue;
			if (!clusters[c].up) {
				l += snprintf(t + l, cap > l ? cap - l : 0,
					      " %s no answer (down);",
					      clusters[c].name);
				continue;
			}
			if (!p->valid) {
				l += snprintf(t + l, cap > l ? cap - l : 0,
					      " %s refused;", clusters[c].name);
				continue;
			}
			cost = pol_fed_cost(&w, &ac.cat, &pj[i], c, p, now, why,
					    sizeof(why));
			l += snprintf(t + l, cap > l ? cap - l : 0,
				      " %s %.0f s (%s);", clusters[c].name,
				      cost, why);
		}
		if (l >= cap)
			t[cap - 1] = '\0';
		decision[i] = t;
		if (a->cluster < 0)
			no_plan++;
	}
	catalog_free(&ac);
	t_auction = now_s();

	/* 4. pins, per origin */
	for (int c = 0; c < n_clusters; c++) {
		want[c] = false;
		for (int i = 0; i < n_jobs && clusters[c].up; i++)
			if (winner_cluster[i] >= 0 &&
			    !strcmp(jobs[i].origin, clusters[c].name))
				want[c] = true;
	}
	run_children(want, pins_child, out, len, AD_CHILD_LIMIT_S, stop);
	for (int c = 0; c < n_clusters; c++) {
		size_t n = len[c] / sizeof(ad_pin_msg_t);

		for (size_t k = 0; k < n; k++) {
			ad_pin_msg_t m;

			memcpy(&m, out[c] + k * sizeof(m), sizeof(m));
			if (m.idx >= (uint32_t) n_jobs)
				continue;
			pin_rc[m.idx] = m.rc;
			if (!m.rc || m.step == 3) {
				pinned++;
				ad_info("JobId=%u (origin %s) pinned to %s: %s",
					jobs[m.idx].job_id, jobs[m.idx].origin,
					clusters[winner_cluster[m.idx]].name,
					decision[m.idx]);
			} else {
				failed++;
				ad_error("JobId=%u: %s failed: %s",
					 jobs[m.idx].job_id,
					 m.step == 1 ? "pinning (Clusters=)"
						     : "the release",
					 slurm_strerror(m.rc));
			}
		}
		free(out[c]);
	}
	st->pinned += pinned;
	st->failed += failed;
	st->no_plan += no_plan;
	write_state(state_path, now, now_s() - t0, pin_rc);
	ad_verbose(
		"round %llu: %d held jobs, %d pinned, %d failed, %d without a plan; %d/%d clusters up; survey %.3f s, plans %.3f s, auction %.3f s, pins %.3f s",
		(unsigned long long) st->rounds, n_jobs, pinned, failed,
		no_plan, n_up, n_clusters, t_survey - t0, t_plans - t_survey,
		t_auction - t_plans, now_s() - t_auction);
	free(pj);
	free(plans);
	free(pin_rc);
	return pinned;
}

void ad_round_fini(void)
{
	round_reset();
	for (int c = 0; c < AD_MAX_CLUSTERS; c++) {
		free(usage_text[c]);
		usage_text[c] = NULL;
	}
	if (cluster_list)
		slurm_list_destroy(cluster_list);
	cluster_list = NULL;
	n_clusters = 0;
}
