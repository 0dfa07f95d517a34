/*
 * bench_app_lookup.c - the per-job app lookups of site_factor/agora
 * under slurmctld's job lock (issue 19, item 12), AppDefinition=user with
 * 5,000 users and 20,000 jobs, old against new:
 *   snapshot    each job's tenant index: before, the app name malloc'ed
 *               (agora_conf_app_name) and every tenant compared in turn;
 *               now the key on the stack (agora_conf_app_key) and a hash
 *               index (pol_app_index)
 *   site factor each job's app: before, the name malloc'ed, the award
 *               table's apps and the federation usage table scanned in
 *               turn; now the key on the stack, the award table's name
 *               index and a hash index of the usage table
 * A benchmark, not a test: it asserts only that old and new agree.
 *
 *   make -C tests/unit bench_app_lookup && tests/unit/bench_app_lookup [USERS JOBS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agora_conf.h"
#include "pol_app.h"
#include "pol_app_index.h"
#include "pol_award.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *what, int users, int jobs, double t_old,
		   double t_new)
{
	printf("%-12s %d apps, %d jobs: old %8.3f ms (%6.0f ns/job)  new "
	       "%8.3f ms (%4.0f ns/job)  %5.0fx\n",
	       what, users, jobs, t_old * 1e3, t_old * 1e9 / jobs, t_new * 1e3,
	       t_new * 1e9 / jobs, t_new > 0 ? t_old / t_new : 0.0);
}

int main(int argc, char **argv)
{
	int users = argc > 1 ? atoi(argv[1]) : 5000;
	int jobs = argc > 2 ? atoi(argv[2]) : 20000;
	agora_conf_t conf;
	unsigned *uid;
	char **ten_old, (*fed)[POL_APP_KEY_LEN];
	int n_old = 0, i, k, bad = 0;
	long sum_old = 0, sum_new = 0;
	double t0, t_old, t_new, u_old = 0, u_new = 0;
	pol_app_index_t *ix = pol_app_index_create(), *fix;
	pol_award_t *a = pol_award_create();

	if (users < 1 || jobs < 1 || !ix || !a)
		return 2;
	agora_conf_defaults(&conf);
	conf.app_def = AGORA_APP_USER;
	uid = calloc((size_t) jobs, sizeof(*uid));
	ten_old = calloc((size_t) users, sizeof(*ten_old));
	fed = calloc((size_t) users, sizeof(*fed));
	if (!uid || !ten_old || !fed || !(fix = pol_app_index_create()))
		return 2;
	srand(19);
	for (i = 0; i < jobs; i++)
		uid[i] = 1000 + (unsigned) (rand() % users);

	/* snapshot: before */
	t0 = now_s();
	for (i = 0; i < jobs; i++) {
		char *name = agora_conf_app_name(&conf, "acct", uid[i], "j");
		char key[POL_APP_KEY_LEN];

		pol_app_key(name, key);
		free(name);
		for (k = 0; k < n_old && strcmp(ten_old[k], key); k++)
			;
		if (k == n_old)
			ten_old[n_old++] = strdup(key);
		sum_old += k;
	}
	t_old = now_s() - t0;
	/* snapshot: now */
	t0 = now_s();
	for (i = 0, k = 0; i < jobs; i++) {
		char key[POL_APP_KEY_LEN];
		int t;

		agora_conf_app_key(&conf, "acct", uid[i], key);
		if (pol_app_index_get(ix, key, &t)) {
			t = k++;
			if (pol_app_index_put(ix, key, t) < 0)
				return 2;
		}
		sum_new += t;
	}
	t_new = now_s() - t0;
	bad += sum_old != sum_new;
	report("snapshot", n_old, jobs, t_old, t_new);

	/* site factor: the award table and the federation usage of every
	 * app (one entry each) */
	for (k = 0; k < n_old; k++) {
		if (pol_award_app(a, ten_old[k], 1.0, 1.0, 1.0) < 0 ||
		    pol_app_index_put(fix, ten_old[k], k) < 0)
			return 2;
		snprintf(fed[k], sizeof(fed[k]), "%s", ten_old[k]);
	}
	t0 = now_s();
	for (i = 0; i < jobs; i++) {
		char *name = agora_conf_app_name(&conf, "acct", uid[i], "j");
		char key[POL_APP_KEY_LEN];
		int n = pol_award_n_apps(a);

		pol_app_key(name, key);
		free(name);
		for (k = 0; k < n && strcmp(pol_award_app_at(a, k)->name, key);
		     k++)
			;
		u_old += k;
		for (k = 0; k < n_old && strcmp(fed[k], key); k++)
			;
		u_old += k;
	}
	t_old = now_s() - t0;
	t0 = now_s();
	for (i = 0; i < jobs; i++) {
		char key[POL_APP_KEY_LEN];
		const pol_award_app_t *app;
		int f = -1;

		agora_conf_app_key(&conf, "acct", uid[i], key);
		app = pol_award_app_find(a, key);
		(void) pol_app_index_get(fix, key, &f);
		u_new += (app ? app - pol_award_app_at(a, 0) : -1) + f;
	}
	t_new = now_s() - t0;
	bad += u_old != u_new;
	report("site factor", n_old, jobs, t_old, t_new);

	for (k = 0; k < n_old; k++)
		free(ten_old[k]);
	free(ten_old);
	free(fed);
	free(uid);
	pol_app_index_destroy(&ix);
	pol_app_index_destroy(&fix);
	pol_award_destroy(&a);
	agora_conf_free(&conf);
	if (bad)
		fprintf(stderr, "bench_app_lookup: old and new disagree\n");
	return bad ? 1 : 0;
}
