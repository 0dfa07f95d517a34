/*
 * agorad_metrics.c - agorad's metrics in Prometheus' text format
 * (common/base/agora_prom.h formats them):
 *
 *   - after each turn of the loop, ad_metrics_update() reads what the
 *     turn left (ad_stats_t, agorad's state file X.json and loan state
 *     X.loans.json, slurmctld's view StateSaveLocation/agora_view.json
 *     when readable), keeps the counters, and writes the text to X.prom
 *     beside the state file (agoractl metrics appends it);
 *   - with MetricsPort=N (agora.conf) a thread serves the same text as
 *     HTTP/1.0 GET /metrics on port N: one connection at a time, a
 *     request of at most AD_HTTP_MAX bytes read within AD_HTTP_TIMEOUT_S,
 *     anything else answered 400/404/405/431 and closed; a connection is
 *     closed after AD_HTTP_CONN_S whatever the client does, and the text
 *     is copied out before it is sent, so a slow reader never holds the
 *     lock the loop takes after each turn.
 *
 * Counters count what agorad saw: a reclaim is counted once (history
 * entries are told apart by time and nodes), its latency when its
 * done_s first reads >= 0; a loan is a node seen lent with a "since"
 * it was not seen lent with before; bids are the held jobs of a round
 * times the clusters up in it (each job is offered to every cluster).
 * The in-cluster auction's awards and preemptions are not in the view
 * and not here: the view's pass number is (agora_sched_pass).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/slurm.h>

#include "agora_file.h"
#include "agora_prom.h"
#include "agorad.h"
#include "agorad_loan.h"

#define AD_HTTP_MAX       4096
#define AD_HTTP_TIMEOUT_S 2
#define AD_HTTP_CONN_S    10 /* a whole connection, request and answer */
#define AD_SEEN_MAX       1024
#define AD_NODES_MAX      512

typedef struct {
	uint64_t bids, loans, reclaims, preemptions, latency_n, rounds_seen;
	double gpu_h_lost, latency_sum, round_sum;
	int64_t last_round_time;
	uint64_t seen[AD_SEEN_MAX], done[AD_SEEN_MAX];
	int n_seen, n_done;
	char lent_name[AD_NODES_MAX][64];
	int64_t lent_since[AD_NODES_MAX];
	int n_lent;
	double view_retry;
	char *view_path;
} ad_metrics_t;

static ad_metrics_t M;
static pthread_mutex_t text_lock = PTHREAD_MUTEX_INITIALIZER;
static char *served; /* under text_lock */
static pthread_t srv_thread;
static int srv_fd = -1, srv_port;
static volatile int srv_stop;

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211ULL;
	return h;
}

/* Whether key is in set; added if not (oldest dropped when full). */
static bool seen_add(uint64_t *set, int *n, uint64_t key)
{
	for (int i = 0; i < *n; i++)
		if (set[i] == key)
			return true;
	if (*n == AD_SEEN_MAX) {
		memmove(set, set + 1, (AD_SEEN_MAX - 1) * sizeof(*set));
		(*n)--;
	}
	set[(*n)++] = key;
	return false;
}

static json_object *read_json(const char *path)
{
	agora_err_t err = { { 0 } };
	char *text = NULL;
	size_t len = 0;
	json_object *o;

	if (!path ||
	    agora_file_read_ex(path, 64 << 20, 0, &text, &len, NULL, &err) < 0)
		return NULL;
	o = json_tokener_parse(text);
	free(text);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v)
						   : 0;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v)
						   : "";
}

/* The last round's clusters (gauges) and its bids (counted once). */
static void fed_part(agora_prom_t *p, json_object *st)
{
	static const char *kinds[3] = { "total", "free", "pending" };
	static const char *keys[3] = { "gpus_total", "gpus_free",
				       "gpus_pending" };
	json_object *cl = NULL, *jobs = NULL;
	int up = 0;

	if (!st || !json_object_object_get_ex(st, "clusters", &cl) ||
	    !json_object_is_type(cl, json_type_array))
		return;
	agora_prom_family(
		p, "agora_fed_cluster_gpus", "gauge",
		"GPUs of each cluster in agorad's last round, by state (total, free, pending: asked by pending jobs)");
	for (size_t i = 0; i < json_object_array_length(cl); i++) {
		json_object *c = json_object_array_get_idx(cl, i), *v;

		if (json_object_object_get_ex(c, "up", &v) &&
		    json_object_get_boolean(v))
			up++;
		for (int k = 0; k < 3; k++)
			agora_prom_sample(p, "agora_fed_cluster_gpus",
					  (const char *[]){ "cluster",
							    jstr(c, "name"),
							    "state", kinds[k] },
					  2, jnum(c, keys[k]));
	}
	agora_prom_family(p, "agora_fed_cluster_up", "gauge",
			  "1 if the cluster answered agorad's last round");
	for (size_t i = 0; i < json_object_array_length(cl); i++) {
		json_object *c = json_object_array_get_idx(cl, i), *v;

		agora_prom_sample(
			p, "agora_fed_cluster_up",
			(const char *[]){ "cluster", jstr(c, "name") }, 1,
			json_object_object_get_ex(c, "up", &v) &&
				json_object_get_boolean(v));
	}
	if ((int64_t) jnum(st, "time") != M.last_round_time &&
	    json_object_object_get_ex(st, "jobs", &jobs)) {
		M.last_round_time = (int64_t) jnum(st, "time");
		M.bids += (uint64_t) json_object_array_length(jobs) * up;
	}
	agora_prom_one(p, "agora_fed_round_jobs", "gauge",
		       "Jobs held for the auction in agorad's last round",
		       jobs ? (double) json_object_array_length(jobs) : 0);
}

/* A node's lent-since: a new loan if not seen before. */
static void loan_seen(const char *name, int64_t since)
{
	int i = 0;

	while (i < M.n_lent && strcmp(M.lent_name[i], name))
		i++;
	if (i == M.n_lent) {
		if (M.n_lent == AD_NODES_MAX)
			return;
		snprintf(M.lent_name[i], sizeof(M.lent_name[i]), "%s", name);
		M.lent_since[i] = -1;
		M.n_lent++;
	}
	if (M.lent_since[i] != since) {
		M.lent_since[i] = since;
		M.loans++;
	}
}

static void loan_part(agora_prom_t *p, json_object *ls)
{
	static const char *states[3] = { "home", "lent", "returning" };
	double n_state[3] = { 0, 0, 0 };
	json_object *a;

	if (!ls)
		return;
	if (json_object_object_get_ex(ls, "nodes", &a))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *n = json_object_array_get_idx(a, i);

			for (int s = 0; s < 3; s++)
				if (!strcmp(jstr(n, "state"), states[s]))
					n_state[s]++;
			if (!strcmp(jstr(n, "state"), "lent"))
				loan_seen(jstr(n, "name"),
					  (int64_t) jnum(n, "since"));
		}
	if (json_object_object_get_ex(ls, "reclaims", &a))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *r = json_object_array_get_idx(a, i);
			char t[32];
			uint64_t key;
			const char *v = jstr(r, "victims");

			snprintf(t, sizeof(t), "%.0f|", jnum(r, "time"));
			key = fnv(jstr(r, "nodes"),
				  fnv(t, 14695981039346656037ULL));
			if (!seen_add(M.seen, &M.n_seen, key)) {
				M.reclaims++;
				M.gpu_h_lost += jnum(r, "cost");
				/* "job:GPU-h" per preempted job,
				 * "job:shrink-N" per shrunk one */
				for (const char *c = v; *c;) {
					const char *e = strchr(c, ',');
					size_t l = e ? (size_t) (e - c)
						     : strlen(c);

					char item[128];

					snprintf(item, sizeof(item), "%.*s",
						 (int) l, c);
					if (l && !strstr(item, ":shrink"))
						M.preemptions++;
					c += l + (e ? 1 : 0);
				}
			}
			if (jnum(r, "done_s") >= 0 &&
			    !seen_add(M.done, &M.n_done, key)) {
				M.latency_n++;
				M.latency_sum += jnum(r, "done_s");
			}
		}
	agora_prom_family(p, "agora_loan_nodes", "gauge",
			  "Inference nodes by loan state");
	for (int s = 0; s < 3; s++)
		agora_prom_sample(p, "agora_loan_nodes",
				  (const char *[]){ "state", states[s] }, 1,
				  n_state[s]);
	agora_prom_one(p, "agora_loan_demand_nodes", "gauge",
		       "Inference demand in nodes at the last loan pass",
		       jnum(ls, "demand"));
}

/* GPUs of running jobs per account and cluster (a job counted once: on
 * the cluster it runs on). */
typedef struct {
	int gpus;
	char account[64], cluster[64];
} ad_run_t;

static int cmp_run(const void *a, const void *b)
{
	const ad_run_t *x = a, *y = b;
	int c = strcmp(x->account, y->account);

	if (c)
		return c;
	return strcmp(x->cluster, y->cluster);
}

/* Where the rows come from:
 *   - the last round's surveys (the state file's running_gpus of each
 *     cluster that answered), when that round is at most max_age_s old
 *     (ad_metrics_update: three round periods, at least 120 s; 0 with
 *     FedAuction=no): the surveys read every cluster's job table anyway,
 *     each in a child with its own time limit;
 *   - else (no rounds, or rounds stopped) the local cluster's job list,
 *     read at most every AD_METRICS_JOBS_EVERY_S.
 * Never the federation's job list (SHOW_FEDERATION), which this loop
 * read before: libslurm asks every sibling and waits for all of them, so
 * a hung sibling held the loop that runs the rounds for MessageTimeout
 * every read (doc/evaluation.md, "A hung sibling and the metrics"). */
#define AD_METRICS_JOBS_EVERY_S 15.0

static struct {
	ad_run_t *rows; /* one per account and cluster, GPUs summed */
	size_t n;
	bool read;     /* the last read answered */
	double at;     /* when the local list was read (0: never) */
	bool of_state; /* the rows are the state file's */
} R;

static void rows_set(ad_run_t *r, size_t n)
{
	size_t out = 0;

	qsort(r, n, sizeof(*r), cmp_run);
	for (size_t i = 0; i < n;) {
		size_t e = i;
		int g = 0;

		while (e < n && !strcmp(r[e].account, r[i].account) &&
		       !strcmp(r[e].cluster, r[i].cluster))
			g += r[e++].gpus;
		r[out] = r[i];
		r[out++].gpus = g;
		i = e;
	}
	free(R.rows);
	R.rows = r;
	R.n = out;
	R.read = true;
}

/* The rows of the state file st (the last round's), if it is recent and
 * a cluster answered in it. */
static bool rows_of_state(json_object *st, double max_age_s, double now)
{
	json_object *cl = NULL, *t;
	ad_run_t *r = NULL;
	size_t n = 0;
	bool any = false;

	if (!st || max_age_s <= 0 ||
	    !json_object_object_get_ex(st, "time", &t) ||
	    now - json_object_get_double(t) > max_age_s ||
	    !json_object_object_get_ex(st, "clusters", &cl) ||
	    !json_object_is_type(cl, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(cl); i++) {
		json_object *c = json_object_array_get_idx(cl, i), *g;
		ad_run_t *nr;

		if (!json_object_object_get_ex(c, "running_gpus", &g) ||
		    !json_object_is_type(g, json_type_object))
			continue;
		any = true;
		json_object_object_foreach (g, acct, v) {
			if (!(nr = realloc(r, (n + 1) * sizeof(*r)))) {
				free(r);
				return false;
			}
			r = nr;
			memset(&r[n], 0, sizeof(r[n]));
			snprintf(r[n].account, sizeof(r[n].account), "%s",
				 acct);
			snprintf(r[n].cluster, sizeof(r[n].cluster), "%s",
				 jstr(c, "name"));
			r[n++].gpus = json_object_get_int(v);
		}
	}
	if (!any) {
		free(r);
		return false;
	}
	if (!r && !(r = calloc(1, sizeof(*r))))
		return false;
	rows_set(r, n);
	return true;
}

/* The local cluster's running GPU jobs (SHOW_LOCAL: this slurmctld
 * only). */
static void rows_of_local(double now)
{
	job_info_msg_t *m = NULL;
	ad_run_t *r;
	size_t n = 0;

	R.at = now;
	R.read = false;
	if (slurm_load_jobs((time_t) 0, &m, SHOW_ALL | SHOW_LOCAL))
		return;
	if (!(r = calloc(m->record_count + 1, sizeof(*r)))) {
		slurm_free_job_info_msg(m);
		return;
	}
	for (uint32_t i = 0; i < m->record_count; i++) {
		slurm_job_info_t *j = &m->job_array[i];
		const char *g = j->tres_alloc_str
					? strstr(j->tres_alloc_str, "gres/gpu=")
					: NULL;

		if ((j->job_state & JOB_STATE_BASE) != JOB_RUNNING ||
		    (j->job_state & JOB_REVOKED) || !g || atoi(g + 9) <= 0)
			continue;
		r[n].gpus = atoi(g + 9);
		snprintf(r[n].account, sizeof(r[n].account), "%s",
			 j->account ? j->account : "");
		snprintf(r[n].cluster, sizeof(r[n].cluster), "%s",
			 j->cluster ? j->cluster : "");
		n++;
	}
	slurm_free_job_info_msg(m);
	rows_set(r, n);
}

static void gpus_part(agora_prom_t *p, json_object *st, double max_age_s,
		      double now)
{
	if (rows_of_state(st, max_age_s, now))
		R.of_state = true;
	else if (R.of_state || R.at <= 0 || now < R.at ||
		 now - R.at >= AD_METRICS_JOBS_EVERY_S) {
		R.of_state = false;
		rows_of_local(now);
	}
	agora_prom_one(
		p, "agora_running_jobs_read", "gauge",
		"1 if the job lists behind agora_account_running_gpus were read",
		R.read);
	if (!R.read)
		return;
	agora_prom_family(
		p, "agora_account_running_gpus", "gauge",
		"GPUs allocated to the account's running jobs, by cluster");
	for (size_t i = 0; i < R.n; i++)
		agora_prom_sample(
			p, "agora_account_running_gpus",
			(const char *[]){ "account", R.rows[i].account,
					  "cluster", R.rows[i].cluster },
			2, R.rows[i].gpus);
}

/* slurmctld's view, where agorad can read it (the controller). */
static void view_part(agora_prom_t *p, double now)
{
	agora_err_t err = { { 0 } };
	agora_view_t v;

	if (!M.view_path && now >= M.view_retry) {
		slurm_conf_t *sc = NULL;

		M.view_retry = now + 30;
		if (!slurm_load_ctl_conf((time_t) 0, &sc) &&
		    sc->state_save_location) {
			size_t n = strlen(sc->state_save_location) + 20;

			if ((M.view_path = malloc(n)))
				snprintf(M.view_path, n, "%s/agora_view.json",
					 sc->state_save_location);
		}
		if (sc)
			slurm_free_ctl_conf(sc);
	}
	if (!M.view_path || agora_view_load(M.view_path, &v, NULL, &err)) {
		agora_prom_one(p, "agora_view_up", "gauge",
			       "1 if slurmctld's Agora view was read, else 0",
			       0);
		return;
	}
	agora_prom_one(p, "agora_view_up", "gauge",
		       "1 if slurmctld's Agora view was read, else 0", 1);
	agora_prom_one(
		p, "agora_sched_pass", "gauge",
		"Number of the Agora scheduling pass that wrote the view",
		(double) v.pass);
	agora_prom_view(p, v.apps, v.n_apps, v.leases, v.n_leases);
	agora_view_free(&v);
}

static void counters(agora_prom_t *p, const ad_stats_t *st, double loan_pass_s)
{
	if (st->rounds != M.rounds_seen) {
		M.rounds_seen = st->rounds;
		M.round_sum += st->last_round_s;
	}
	agora_prom_one(p, "agora_fed_rounds_total", "counter",
		       "Federation auction rounds run", (double) st->rounds);
	agora_prom_one(p, "agora_fed_bids_total", "counter",
		       "Bids asked: held jobs times clusters up, per round",
		       (double) M.bids);
	agora_prom_one(p, "agora_fed_pins_total", "counter",
		       "Jobs pinned to the cluster that won their auction",
		       (double) st->pinned);
	agora_prom_one(p, "agora_fed_pin_failures_total", "counter",
		       "Pins that failed", (double) st->failed);
	agora_prom_family(p, "agora_fed_round_seconds", "summary",
			  "Time of a federation round");
	agora_prom_sample(p, "agora_fed_round_seconds_sum", NULL, 0,
			  M.round_sum);
	agora_prom_sample(p, "agora_fed_round_seconds_count", NULL, 0,
			  (double) st->rounds);
	agora_prom_one(p, "agora_fed_last_round_seconds", "gauge",
		       "Time of the last federation round", st->last_round_s);
	agora_prom_one(p, "agora_loan_pass_seconds", "gauge",
		       "Time of the last loan pass", loan_pass_s);
	agora_prom_one(p, "agora_loans_total", "counter",
		       "Inference nodes lent to training", (double) M.loans);
	agora_prom_one(p, "agora_reclaims_total", "counter",
		       "Reclaims of lent nodes", (double) M.reclaims);
	agora_prom_one(p, "agora_reclaim_preemptions_total", "counter",
		       "Training jobs requeued by reclaims",
		       (double) M.preemptions);
	agora_prom_one(p, "agora_reclaim_lost_gpu_seconds_total", "counter",
		       "GPU-seconds of training work lost to reclaims",
		       M.gpu_h_lost * 3600);
	agora_prom_family(p, "agora_reclaim_latency_seconds", "summary",
			  "Time from a reclaim to its nodes back home");
	agora_prom_sample(p, "agora_reclaim_latency_seconds_sum", NULL, 0,
			  M.latency_sum);
	agora_prom_sample(p, "agora_reclaim_latency_seconds_count", NULL, 0,
			  (double) M.latency_n);
}

void ad_metrics_update(const char *state_path, const ad_stats_t *st,
		       double loan_pass_s, double state_max_age_s, double now)
{
	agora_err_t err = { { 0 } };
	agora_prom_t p, q;
	json_object *o, *so;
	char *lp, *pp, *all;
	const char *text, *vtext;

	agora_prom_init(&p);
	agora_prom_init(&q);
	counters(&p, st, loan_pass_s);
	so = read_json(state_path);
	fed_part(&p, so);
	lp = state_path ? ad_loan_path(state_path) : NULL;
	o = read_json(lp);
	loan_part(&p, o);
	json_object_put(o);
	free(lp);
	/* X.prom: agorad's own part (agoractl metrics adds the view it
	 * reads from slurmctld); /metrics: both */
	view_part(&q, now);
	gpus_part(&q, so, state_max_age_s, now);
	json_object_put(so);
	if (!(text = agora_prom_text(&p)) || !(vtext = agora_prom_text(&q))) {
		ad_error("metrics: %s", p.failed ? p.err : q.err);
		agora_prom_free(&p);
		agora_prom_free(&q);
		return;
	}
	if (state_path && (pp = agora_prom_state_path(state_path))) {
		if (agora_file_write_atomic(pp, text, strlen(text), &err))
			ad_error("metrics: %s", err.text);
		free(pp);
	}
	if ((all = malloc(strlen(text) + strlen(vtext) + 1))) {
		strcpy(all, text);
		strcat(all, vtext);
	}
	pthread_mutex_lock(&text_lock);
	free(served);
	served = all;
	pthread_mutex_unlock(&text_lock);
	agora_prom_free(&p);
	agora_prom_free(&q);
}

/* ---- HTTP/1.0 GET /metrics --------------------------------------- */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* when the connection being served must end (mono_s) */
static double conn_end;

static void reply(int fd, const char *status, const char *body, bool head)
{
	char hdr[256];
	size_t bl = strlen(body);
	int n = snprintf(
		hdr, sizeof(hdr),
		"HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		status, bl);

	if (send(fd, hdr, (size_t) n, MSG_NOSIGNAL) != n || head)
		return;
	for (size_t off = 0; off < bl;) {
		ssize_t w;

		if (mono_s() >= conn_end)
			return; /* a reader too slow: cut off */
		w = send(fd, body + off, bl - off, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		off += (size_t) w;
	}
}

static void serve_one(int fd)
{
	struct timeval tv = { AD_HTTP_TIMEOUT_S, 0 };
	char req[AD_HTTP_MAX + 1], *sp, *path, *ver, *body;
	double t0;
	size_t len = 0;
	bool head = false;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	t0 = mono_s();
	conn_end = t0 + AD_HTTP_CONN_S;
	while (len < AD_HTTP_MAX) {
		ssize_t r;

		if (mono_s() >= t0 + AD_HTTP_TIMEOUT_S)
			break; /* the request trickles: take what came */
		r = recv(fd, req + len, AD_HTTP_MAX - len, 0);
		if (r <= 0)
			break;
		len += (size_t) r;
		req[len] = '\0';
		if (memchr(req, '\0', len) || strstr(req, "\r\n\r\n") ||
		    strstr(req, "\n\n"))
			break;
	}
	req[len] = '\0';
	if (!len)
		return; /* nothing asked (or only a connect): nothing said */
	if (memchr(req, '\0', len)) {
		reply(fd, "400 Bad Request", "bad request\n", false);
		return;
	}
	if (!strstr(req, "\r\n\r\n") && !strstr(req, "\n\n")) {
		reply(fd,
		      len >= AD_HTTP_MAX ? "431 Request Header Fields Too Large"
					 : "400 Bad Request",
		      "bad request\n", false);
		return;
	}
	req[strcspn(req, "\r\n")] = '\0';
	sp = strchr(req, ' ');
	path = sp ? sp + 1 : NULL;
	ver = path ? strchr(path, ' ') : NULL;
	if (!sp || !ver || strncmp(ver + 1, "HTTP/1.", 7)) {
		reply(fd, "400 Bad Request", "bad request\n", false);
		return;
	}
	*sp = *ver = '\0';
	head = !strcmp(req, "HEAD");
	if (strcmp(req, "GET") && !head) {
		reply(fd, "405 Method Not Allowed", "GET /metrics only\n",
		      false);
		return;
	}
	path[strcspn(path, "?")] = '\0';
	if (strcmp(path, "/metrics")) {
		reply(fd, "404 Not Found", "GET /metrics only\n", head);
		return;
	}
	/* a copy: the send may take up to AD_HTTP_CONN_S, and the loop
	 * takes text_lock after every turn */
	pthread_mutex_lock(&text_lock);
	body = strdup(served ? served : "");
	pthread_mutex_unlock(&text_lock);
	if (!body) {
		reply(fd, "503 Service Unavailable", "out of memory\n", false);
		return;
	}
	reply(fd, "200 OK", body, head);
	free(body);
}

static void *serve(void *arg)
{
	(void) arg;
	while (!srv_stop) {
		struct pollfd pfd = { .fd = srv_fd, .events = POLLIN };
		int c;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		if ((c = accept(srv_fd, NULL, NULL)) < 0)
			continue;
		serve_one(c);
		shutdown(c, SHUT_WR);
		close(c);
	}
	return NULL;
}

int ad_metrics_start(int port)
{
	struct sockaddr_in a;
	sigset_t all, old;
	int one = 1, rc;

	if (port == srv_port)
		return 0;
	ad_metrics_stop();
	if (port <= 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	a.sin_port = htons((uint16_t) port);
	if ((srv_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(srv_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(srv_fd, (struct sockaddr *) &a, sizeof(a)) ||
	    listen(srv_fd, 16)) {
		ad_error("MetricsPort=%d: cannot listen: %s; no /metrics", port,
			 strerror(errno));
		if (srv_fd >= 0)
			close(srv_fd);
		srv_fd = -1;
		return -1;
	}
	srv_stop = 0;
	/* the thread takes no signal: SIGTERM, SIGHUP and SIGCHLD stay
	 * with the loop */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&srv_thread, NULL, serve, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		ad_error("MetricsPort=%d: no thread; no /metrics", port);
		close(srv_fd);
		srv_fd = -1;
		return -1;
	}
	srv_port = port;
	ad_info("metrics: serving http://0.0.0.0:%d/metrics", port);
	return 0;
}

void ad_metrics_stop(void)
{
	if (srv_port) {
		srv_stop = 1;
		pthread_join(srv_thread, NULL);
		close(srv_fd);
		srv_fd = -1;
		srv_port = 0;
	}
}

void ad_metrics_child(void)
{
	if (srv_fd >= 0)
		close(srv_fd);
	srv_fd = -1;
	srv_port = 0;
}

void ad_metrics_fini(void)
{
	ad_metrics_stop();
	pthread_mutex_lock(&text_lock);
	free(served);
	served = NULL;
	pthread_mutex_unlock(&text_lock);
	free(M.view_path);
	M.view_path = NULL;
	free(R.rows);
	memset(&R, 0, sizeof(R));
}
