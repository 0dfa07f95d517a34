/*
 * agorad_auction.c - steps 3 and 4 of a round (agorad_round.c), and the
 * credit exchange between the clusters.
 *
 *   3. the auction's inputs and outputs: the catalog with one site per
 *      cluster, each team's credit over the federation, and the decision
 *      text written into the AdminComment of each job
 *   4. pins, the child of one origin: Clusters=<winner> with the hold
 *      mark "pinned to <winner>" (the decision inside), then the release
 *      with the decision as the AdminComment in one update (Slurm
 *      forwards it to the sibling copy the release submits), so the
 *      SystemComment that site_factor/agora copies from it is shown on
 *      every cluster.
 *      The steps and what each crash order leaves: pol_fed_hold.h; a job
 *      an earlier round left half done is re-read and finished here.
 *
 * The credit exchange: usage_text[c] carries every app's usage on the
 * other clusters to cluster c with its first will-run request (step 2).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include "agora_compat_pub.h"

#include "agora_fed_marks.h"
#include "agora_file.h"
#include "agorad_round_int.h"
#include "pol_fed_willrun.h"

/* ---- 4. pins -------------------------------------------------------- */

static int update(job_desc_msg_t *d)
{
	int rc = slurm_update_job(d);

	return rc ? slurm_get_errno() : 0;
}

static volatile sig_atomic_t pins_stop = 0;
/* the pins child's helpers (AD_PINS_WORKERS): they get its SIGTERM */
static pid_t pins_helper[AD_PINS_WORKERS];
static volatile sig_atomic_t n_pins_helpers = 0;

static void pins_on_term(int sig)
{
	(void) sig;
	pins_stop = 1;
	for (int k = 0; k < n_pins_helpers; k++)
		if (pins_helper[k] > 0)
			kill(pins_helper[k], SIGTERM);
}

/* Fault injection for tests/integration/test_fed.sh: with
 * AGORAD_TEST_REFUSE_RELEASE=1 every release is answered as refused
 * (ESLURM_ACCESS_DENIED) without being sent, as a slurmctld that refuses
 * it would. */
static bool refuse_release(void)
{
	const char *e = getenv("AGORAD_TEST_REFUSE_RELEASE");

	return e && !strcmp(e, "1");
}

/* AGORAD_TEST_PIN_DELAY_MS=N (tests): N ms after each step of a pin, so
 * that a test's kill lands between two steps.  With
 * AGORAD_TEST_PIN_MARK=FILE also, FILE is created after a step that is
 * not the pin's last (the pin is half done for the next N ms): the test
 * waits for FILE instead of polling slurmctld, which a loaded host
 * answers too slowly to see a 300 ms window. */
static void test_pin_delay(bool mid)
{
	const char *e = getenv("AGORAD_TEST_PIN_DELAY_MS");
	const char *mark = getenv("AGORAD_TEST_PIN_MARK");
	long ms = e ? strtol(e, NULL, 10) : 0;

	if (ms > 0 && ms <= 10000) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		if (mid && mark && *mark) {
			int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC,
				      0600);

			if (fd >= 0)
				close(fd);
		}
		nanosleep(&ts, NULL);
	}
}

/* Re-read job j at its origin (the pins child's cluster): what it shows
 * into *o, its mark into *m (*text: the AdminComment the mark borrows
 * from, malloc'ed).  false if it cannot be read. */
static bool reread(const ad_job_t *j, pol_fed_hold_obs_t *o, pol_fed_mark_t *m,
		   char **text)
{
	job_info_msg_t *jm = NULL;
	bool found = false;

	*text = NULL;
	if (slurm_load_job(&jm, j->job_id, SHOW_ALL | SHOW_LOCAL) || !jm)
		return false;
	for (uint32_t k = 0; k < jm->record_count; k++) {
		const slurm_job_info_t *ji = &jm->job_array[k];

		if (ji->job_id != j->job_id)
			continue;
		*o = hold_obs(ji);
		if (ji->admin_comment && !(*text = strdup(ji->admin_comment)))
			break;
		pol_fed_mark_parse(*text, m);
		found = true;
		break;
	}
	slurm_free_job_info_msg(jm);
	return found;
}

/* The steps of work w on job j (pol_fed_hold_steps, each update from
 * pol_fed_update_build); *m gets the last step tried and its rc. */
static void pin_steps(const ad_job_t *j, const pol_fed_pin_work_t *w,
		      ad_pin_msg_t *m)
{
	pol_fed_step_t steps[3];
	int n = pol_fed_hold_steps(w->act, steps);

	for (int k = 0; k < n; k++) {
		pol_fed_update_t u;
		job_desc_msg_t d;

		m->step = steps[k];
		if (pol_fed_update_build(steps[k], w, time(NULL), j->hold_since,
					 &u)) {
			m->rc = errno ? errno : EINVAL;
			return;
		}
		slurm_init_job_desc_msg(&d);
		d.job_id = j->job_id;
		if (u.clusters)
			d.clusters = (char *) u.clusters;
		if (u.release)
			d.priority = INFINITE;
		d.admin_comment = u.admin_comment;
		if (steps[k] == POL_FED_STEP_RELEASE && refuse_release())
			m->rc = ESLURM_ACCESS_DENIED;
		else
			m->rc = update(&d);
		pol_fed_update_free(&u);
		if (m->rc)
			return;
		test_pin_delay(k + 1 < n);
	}
}

bool pin_wanted(const ad_round_t *r, int i)
{
	return pol_fed_pin_wanted(r->jobs[i].act, r->winner_cluster[i] >= 0);
}

/* Whether job i is the pins child of cluster c's to do. */
static bool pin_mine(const ad_round_t *r, int c, int i)
{
	return !strcmp(r->jobs[i].origin, r->clusters[c].name) &&
	       pin_wanted(r, i);
}

/* The jobs of slice s of k (their order among cluster c's jobs to do). */
static void pins_slice(const ad_round_t *r, int c, int fd, int s, int k)
{
	int nth = 0;

	for (int i = 0; i < r->n_jobs && !pins_stop; i++) {
		ad_pin_msg_t m = { .idx = (uint32_t) i };
		int w = r->winner_cluster[i];
		pol_fed_pin_in_t in;
		pol_fed_pin_work_t work;
		pol_fed_hold_obs_t o;
		pol_fed_mark_t mk;
		char *text = NULL;

		if (!pin_mine(r, c, i) || nth++ % k != s)
			continue;
		in.act = r->jobs[i].act;
		in.winner = w >= 0 ? r->clusters[w].name : NULL;
		in.decision = r->decision[i];
		in.stale_winner = r->jobs[i].pin_cluster;
		in.stamp_at = r->jobs[i].stamp_at;
		in.obs_now = NULL;
		in.mark_now = NULL;
		/* a re-auction, or a step an earlier round left: what the
		 * origin's copy shows now decides (level-triggered) */
		if (pol_fed_pin_rereads(in.act) &&
		    reread(&r->jobs[i], &o, &mk, &text)) {
			in.obs_now = &o;
			in.mark_now = &mk;
		}
		work = pol_fed_pin_work(&in);
		/* a re-auction the origin does not confirm: re-pinned
		 * already (its old winner's copy lags) */
		if (!pol_fed_hold_bids(in.act) || work.act != POL_FED_HOLD_NONE)
			pin_steps(&r->jobs[i], &work, &m);
		free(text); /* work.decision may point into it */
		if (pol_fed_hold_bids(in.act) && work.act == POL_FED_HOLD_NONE)
			continue;
		m.done_ms = (int64_t) (ad_now_s() * 1000);
		/* one record, under PIPE_BUF: helpers' writes do not mix */
		(void) write_all(fd, &m, sizeof(m));
	}
}

void pins_child(const ad_round_t *r, int c, int fd)
{
	struct sigaction sa;
	int n_do = 0, k;

	/* SIGTERM (agorad stopping, or the child limit): finish the job in
	 * hand, then stop (SA_RESTART: the update in flight goes on); the
	 * helpers get it too */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pins_on_term;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	for (int i = 0; i < r->n_jobs; i++)
		if (pin_mine(r, c, i))
			n_do++;
	/* a burst: helpers, each pinning every k-th job, so that the
	 * updates' round trips overlap (slurmctld still applies them one at
	 * a time, under its job write lock) */
	k = pol_fed_pin_workers(n_do, AD_PINS_WORKERS, AD_PINS_PER_WORKER);
	for (int s = 1; s < k; s++) {
		pid_t me = getpid(), p = fork();

		if (p == 0) {
			/* killed with the pins child (SIGKILL past its limit):
			 * a helper left running would pin jobs the next round
			 * takes up again */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != me)
				_exit(0);
			n_pins_helpers = 0;
			pins_slice(r, c, fd, s, k);
			_exit(0);
		}
		if (p < 0) { /* its slice is done by no one this round */
			ad_error("fork: %s", strerror(errno));
			continue;
		}
		pins_helper[n_pins_helpers] = p;
		n_pins_helpers = n_pins_helpers + 1;
	}
	pins_slice(r, c, fd, 0, k);
	for (int h = 0; h < n_pins_helpers; h++)
		while (waitpid(pins_helper[h], NULL, 0) < 0 && errno == EINTR)
			;
}

/* ---- the topology model ---------------------------------------------- */

/* A cache: the model loaded (valid while model_loaded), its file. */
static topo_model_t model;
static bool model_loaded;
static char *model_path;
static struct timespec model_mtime;

void model_fini(void)
{
	topo_model_free(&model);
	model_loaded = false;
	free(model_path);
	model_path = NULL;
}

const topo_model_t *model_refresh(const agora_conf_t *conf)
{
	const char *path = conf->topology_model;
	agora_err_t err = { { 0 } };
	struct stat sb;

	if (!path) {
		if (model_path)
			ad_info("TopologyModel unset: plans are scored with uniform node types");
		model_fini();
		return NULL;
	}
	if (stat(path, &sb) < 0) {
		if (!model_path || strcmp(model_path, path))
			ad_error(
				"TopologyModel %s: %m; plans are scored with uniform node types",
				path);
		model_fini();
		model_path = strdup(path);
		return NULL;
	}
	if (model_path && !strcmp(model_path, path) &&
	    sb.st_mtim.tv_sec == model_mtime.tv_sec &&
	    sb.st_mtim.tv_nsec == model_mtime.tv_nsec)
		return model_loaded ? &model : NULL;
	model_fini();
	model_path = strdup(path);
	model_mtime = sb.st_mtim;
	if (topo_model_load(path, &model, &err) < 0) {
		ad_error("%s; plans are scored with uniform node types",
			 err.text);
		return NULL;
	}
	model_loaded = true;
	ad_info("TopologyModel %s: %d node types", path, model.n_types);
	return &model;
}

/* ---- 3. the auction ------------------------------------------------- */

void catalog_free(ad_catalog_t *ac)
{
	free(ac->cat.sites);
	free(ac->cat.datasets);
	free(ac->cat.accounts);
	free(ac->col_of_site);
	if (ac->have_file)
		pol_fed_catalog_free(&ac->file);
	memset(ac, 0, sizeof(*ac));
}

/* The catalog with one site per cluster, in the clusters' order: the
 * datasets' replica bits are renumbered from the file's sites. */
void catalog_build(const ad_round_t *r, const agora_conf_t *conf,
		   ad_catalog_t *ac)
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
	ac->cat.n_sites = r->n_clusters;
	ac->cat.sites = calloc(r->n_clusters + 1, sizeof(pol_fed_site_t));
	for (int c = 0; c < r->n_clusters; c++) {
		int s = ac->have_file ? pol_fed_catalog_site(
						&ac->file, r->clusters[c].name)
				      : -1;

		if (s >= 0)
			ac->cat.sites[c] = ac->file.sites[s];
		else {
			scopy(ac->cat.sites[c].name, r->clusters[c].name,
			      POL_FED_NAME_LEN);
			ac->cat.sites[c].link_bytes_per_s = 1e9;
		}
	}
	if (!ac->have_file)
		return;
	ac->cat.n_datasets = ac->file.n_datasets;
	ac->cat.datasets = calloc(ac->file.n_datasets + 1,
				  sizeof(pol_fed_dataset_t));
	/* account defaults keep the file's dataset indices */
	ac->cat.accounts = calloc(ac->file.n_accounts + 1,
				  sizeof(pol_fed_account_t));
	if (!ac->cat.datasets || !ac->cat.accounts) {
		ad_error("out of memory: auctions go on without data locality");
		ac->cat.n_datasets = 0;
		return;
	}
	ac->cat.n_accounts = ac->file.n_accounts;
	if (ac->file.n_accounts)
		memcpy(ac->cat.accounts, ac->file.accounts,
		       ac->file.n_accounts * sizeof(pol_fed_account_t));
	for (int d = 0; d < ac->file.n_datasets; d++) {
		pol_fed_dataset_t *ds = &ac->cat.datasets[d];

		*ds = ac->file.datasets[d];
		ds->where = 0;
		for (int s = 0; s < ac->file.n_sites && s < 64; s++) {
			int c;

			if (!(ac->file.datasets[d].where & (1ULL << s)))
				continue;
			c = cluster_index(r, ac->file.sites[s].name);
			if (c >= 0)
				ds->where |= 1ULL << c;
		}
	}
}

double fed_credit(const ad_round_t *r, const char *team)
{
	double used = 0, quota = 0;

	for (int c = 0; c < r->n_clusters; c++)
		for (int u = 0; u < r->n_usage[c]; u++)
			if (!strcmp(r->usage[c][u].app, team)) {
				used += r->usage[c][u].usage;
				if (r->usage[c][u].quota > quota)
					quota = r->usage[c][u].quota;
			}
	if (quota <= 0)
		return 1.0;
	return fmax(-1.0, fmin(1.0, (quota - used) / quota));
}

/* ---- the credit exchange ------------------------------------------- */

/* Whether app usage[o][u] was met before, skipping cluster c: it is
 * written once, at its first cluster. */
static bool app_seen_before(const ad_round_t *r, int c, int o, int u)
{
	const char *app = r->usage[o][u].app;

	for (int p = 0; p < o; p++)
		for (int v = 0; p != c && v < r->n_usage[p]; v++)
			if (!strcmp(r->usage[p][v].app, app))
				return true;
	for (int v = 0; v < u; v++)
		if (!strcmp(r->usage[o][v].app, app))
			return true;
	return false;
}

/* The usage of app on every cluster but c. */
static double app_usage_elsewhere(const ad_round_t *r, int c, const char *app)
{
	double sum = 0;

	for (int p = 0; p < r->n_clusters; p++)
		for (int v = 0; p != c && v < r->n_usage[p]; v++)
			if (!strcmp(r->usage[p][v].app, app))
				sum += r->usage[p][v].usage;
	return sum;
}

/* "app:gpu-hours,..." of the other clusters for cluster c (malloc'ed),
 * NULL if there is none (or no memory). */
static char *usage_text_for(const ad_round_t *r, int c)
{
	size_t cap = 256, len = 0;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	t[0] = '\0';
	for (int o = 0; o < r->n_clusters; o++)
		for (int u = 0; o != c && u < r->n_usage[o]; u++) {
			const char *app = r->usage[o][u].app;

			if (app_seen_before(r, c, o, u))
				continue;
			if (len + strlen(app) + 40 > cap) {
				size_t ncap = 2 * cap + strlen(app) + 40;
				char *nt = realloc(t, ncap);

				if (!nt) {
					ad_error(
						"out of memory: no usage for %s",
						r->clusters[c].name);
					free(t);
					return NULL;
				}
				t = nt;
				cap = ncap;
			}
			len += snprintf(t + len, cap - len, "%s%s:%.3f",
					len ? "," : "", app,
					app_usage_elsewhere(r, c, app));
		}
	if (!len) {
		free(t);
		return NULL;
	}
	return t;
}

void build_usage_texts(ad_round_t *r)
{
	for (int c = 0; c < r->n_clusters; c++) {
		free(r->usage_text[c]);
		r->usage_text[c] = usage_text_for(r, c);
	}
}

/* ---- the decision texts ---------------------------------------------- */

char *decision_text(const ad_round_t *r, int i, const pol_fed_award_t *a,
		    const pol_fed_weights_t *w, const ad_catalog_t *ac,
		    const pol_fed_job_t *pj, const pol_fed_plan_t *plans,
		    time_t now)
{
	size_t cap = 2048, l;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	if (a->cluster < 0 && r->jobs[i].too_long[0]) {
		/* no will-run was asked: a truncated request would be a
		 * different job (medium 7); the fail-open releases it */
		char why[128];

		pol_fed_willrun_refusal(r->jobs[i].too_long, why, sizeof(why));
		l = snprintf(
			t, cap,
			"%sheld: %s (refused, never truncated) until the fail-open",
			AGORA_FED_WON, why);
	} else if (a->cluster < 0) {
		l = snprintf(t, cap, "%sno cluster can run it now; held",
			     AGORA_FED_WON);
	} else {
		l = snprintf(
			t, cap,
			"%swon by %s (cost %.0f s; runner-up %s): %s. Bids:",
			AGORA_FED_WON, r->clusters[a->cluster].name, a->cost,
			isfinite(a->second) ? "" : "none", a->why);
		if (isfinite(a->second)) {
			/* put the runner-up's cost in the text */
			char *p = strstr(t, "runner-up ");

			if (p) {
				char buf[64];

				snprintf(buf, sizeof(buf), "runner-up %.0f s)",
					 a->second);
				l = (p - t) + snprintf(p, cap - (p - t),
						       "%s: %s. Bids:", buf,
						       a->why);
			}
		}
	}
	for (int c = 0; c < r->n_clusters && a->cluster >= 0; c++) {
		char why[POL_FED_WHY_LEN];
		const pol_fed_plan_t *p =
			&plans[(size_t) i * r->n_clusters + c];
		double cost;

		if (!(pj[i].eligible & (1ULL << c)))
			continue;
		if (!r->clusters[c].up) {
			l += snprintf(t + l, cap > l ? cap - l : 0,
				      " %s no answer (down);",
				      r->clusters[c].name);
			continue;
		}
		if (!p->valid) {
			l += snprintf(t + l, cap > l ? cap - l : 0,
				      " %s refused;", r->clusters[c].name);
			continue;
		}
		cost = pol_fed_cost(w, &ac->cat, &pj[i], c, p, now, why,
				    sizeof(why));
		l += snprintf(t + l, cap > l ? cap - l : 0, " %s %.0f s (%s);",
			      r->clusters[c].name, cost, why);
	}
	if (l >= cap)
		t[cap - 1] = '\0';
	if (a->cluster >= 0) {
		/* the stamp: when, the planned start and the clusters it may
		 * run on, for the failover of the pin (FedPinStartTimeout) */
		const pol_fed_plan_t *p =
			&plans[(size_t) i * r->n_clusters + a->cluster];
		char *s = pol_fed_mark_stamp(t, now, p->start,
					     r->jobs[i].viable);

		free(t);
		t = s;
	}
	return t;
}
