/*
 * bench_award_apps.c - the per-job app lookup of site_factor/agora (issue
 * 19, item 12): 5,000 apps (AppDefinition=user, 5,000 users) and 20,000
 * pending jobs, each looked up by its app name as job_site_factor() does
 * under slurmctld's job write lock.  Prints the time of the linear scan
 * the award table used before (kept here as the reference) and of its
 * name index now, and their ratio.  A benchmark, not a test: it asserts
 * only that both find the same apps.
 *
 *   make -C tests/unit bench_award_apps && tests/unit/bench_award_apps [USERS JOBS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol_award.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the lookup before: every app's name compared in turn */
static const pol_award_app_t *linear_find(const pol_award_t *a,
					  const char *name)
{
	int i, n = pol_award_n_apps(a);

	for (i = 0; i < n; i++)
		if (!strcmp(pol_award_app_at(a, i)->name, name))
			return pol_award_app_at(a, i);
	return NULL;
}

int main(int argc, char **argv)
{
	int users = argc > 1 ? atoi(argv[1]) : 5000;
	int jobs = argc > 2 ? atoi(argv[2]) : 20000;
	pol_award_t *a = pol_award_create();
	char(*names)[24];
	double t0, t_lin, t_hash;
	long found_lin = 0, found_hash = 0;
	int i;

	if (!a || users < 1 || jobs < 1)
		return 2;
	names = calloc((size_t) jobs, sizeof(*names));
	if (!names)
		return 2;
	for (i = 0; i < users; i++) {
		char n[24];

		snprintf(n, sizeof(n), "user%05d", i);
		if (pol_award_app(a, n, 1.0, 1.0, 1.0) < 0)
			return 2;
	}
	/* jobs of random users (fixed seed), as a queue would hold them */
	srand(19);
	for (i = 0; i < jobs; i++)
		snprintf(names[i], sizeof(names[i]), "user%05d",
			 rand() % users);
	t0 = now_s();
	for (i = 0; i < jobs; i++)
		found_lin += linear_find(a, names[i]) != NULL;
	t_lin = now_s() - t0;
	t0 = now_s();
	for (i = 0; i < jobs; i++)
		found_hash += pol_award_app_find(a, names[i]) != NULL;
	t_hash = now_s() - t0;
	printf("%d apps, %d job lookups: linear %.3f ms (%.0f ns/job), "
	       "indexed %.3f ms (%.0f ns/job): %.0fx\n",
	       users, jobs, t_lin * 1e3, t_lin * 1e9 / jobs, t_hash * 1e3,
	       t_hash * 1e9 / jobs, t_hash > 0 ? t_lin / t_hash : 0.0);
	free(names);
	pol_award_destroy(&a);
	return found_lin == jobs && found_hash == jobs ? 0 : 1;
}
