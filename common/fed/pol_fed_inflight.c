/*
 * pol_fed_inflight.c - pins whose copy has not reached its winner yet
 * (pol_fed_inflight.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pol_fed_inflight.h"

int pol_fed_inflight_add(pol_fed_inflight_list_t *l, uint32_t job_id,
			 const char *cluster, int gpus, int64_t at)
{
	pol_fed_inflight_t *e = NULL;
	size_t n = cluster ? strlen(cluster) : 0;

	if (!n || n >= POL_FED_INFLIGHT_NAME || gpus < 0) {
		errno = EINVAL;
		return -1;
	}
	for (int k = 0; k < l->n && !e; k++)
		if (l->v[k].job_id == job_id)
			e = &l->v[k];
	if (!e) {
		if (l->n == l->cap) {
			int cap = l->cap ? 2 * l->cap : 64;
			pol_fed_inflight_t *v = realloc(l->v, cap * sizeof(*v));

			if (!v) {
				errno = ENOMEM;
				return -1;
			}
			l->v = v;
			l->cap = cap;
		}
		e = &l->v[l->n++];
	}
	e->job_id = job_id;
	memcpy(e->cluster, cluster, n + 1);
	e->gpus = gpus;
	e->at = at;
	return 0;
}

/* Remove entry k (order is not kept). */
static void drop(pol_fed_inflight_list_t *l, int k)
{
	l->v[k] = l->v[--l->n];
}

int pol_fed_inflight_drop(pol_fed_inflight_list_t *l, uint32_t job_id)
{
	for (int k = 0; k < l->n; k++)
		if (l->v[k].job_id == job_id) {
			drop(l, k);
			return 1;
		}
	return 0;
}

int pol_fed_inflight_seen(pol_fed_inflight_list_t *l, const char *cluster,
			  const uint32_t *seen, int n_seen)
{
	int dropped = 0;

	for (int k = 0; k < l->n;) {
		bool found = false;

		if (cluster && !strcmp(l->v[k].cluster, cluster))
			for (int s = 0; s < n_seen && !found; s++)
				found = seen[s] == l->v[k].job_id;
		if (found) {
			drop(l, k);
			dropped++;
		} else {
			k++;
		}
	}
	return dropped;
}

int pol_fed_inflight_expire(pol_fed_inflight_list_t *l, int64_t now,
			    int max_age_s)
{
	int dropped = 0;

	for (int k = 0; k < l->n;) {
		if (l->v[k].at > now || now - l->v[k].at > max_age_s) {
			drop(l, k);
			dropped++;
		} else {
			k++;
		}
	}
	return dropped;
}

int pol_fed_inflight_gpus(const pol_fed_inflight_list_t *l, const char *cluster)
{
	int g = 0;

	for (int k = 0; k < l->n; k++)
		if (cluster && !strcmp(l->v[k].cluster, cluster))
			g += l->v[k].gpus;
	return g;
}

void pol_fed_inflight_free(pol_fed_inflight_list_t *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
