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
			 const char *cluster, int gpus, int64_t limit_s,
			 int64_t at)
{
	pol_fed_inflight_t *e = NULL;
	size_t n = cluster ? strlen(cluster) : 0;

	if (!n || n >= POL_FED_INFLIGHT_NAME || gpus < 0 || limit_s < 0) {
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
	e->limit_s = limit_s;
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

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

int pol_fed_inflight_cancelled(pol_fed_inflight_list_t *l, const uint32_t *ids,
			       int n)
{
	uint32_t *s;
	int dropped = 0;

	if (!l || !ids || n <= 0 || l->n == 0)
		return 0;
	if (!(s = malloc((size_t) n * sizeof(*s))))
		return -1;
	memcpy(s, ids, (size_t) n * sizeof(*s));
	qsort(s, (size_t) n, sizeof(*s), id_cmp);
	for (int k = 0; k < l->n;) {
		if (bsearch(&l->v[k].job_id, s, (size_t) n, sizeof(*s),
			    id_cmp)) {
			drop(l, k); /* the last one moved to k */
			dropped++;
		} else {
			k++;
		}
	}
	free(s);
	return dropped;
}

/* The flow record of cluster (NULL: none, and with add: none free). */
static pol_fed_inflight_flow_t *flow_of(pol_fed_inflight_list_t *l,
					const char *cluster, bool add)
{
	size_t n = cluster ? strlen(cluster) : 0;
	pol_fed_inflight_flow_t *f;

	if (!n || n >= POL_FED_INFLIGHT_NAME)
		return NULL;
	for (int k = 0; k < l->n_flow; k++)
		if (!strcmp(l->flow[k].cluster, cluster))
			return &l->flow[k];
	if (!add || l->n_flow >= POL_FED_INFLIGHT_FLOWS)
		return NULL;
	f = &l->flow[l->n_flow++];
	memset(f, 0, sizeof(*f));
	memcpy(f->cluster, cluster, n + 1);
	return f;
}

static const pol_fed_inflight_flow_t *flow_find(
	const pol_fed_inflight_list_t *l, const char *cluster)
{
	for (int k = 0; cluster && k < l->n_flow; k++)
		if (!strcmp(l->flow[k].cluster, cluster))
			return &l->flow[k];
	return NULL;
}

int pol_fed_inflight_seen(pol_fed_inflight_list_t *l, const char *cluster,
			  const uint32_t *seen, int n_seen, int64_t now)
{
	pol_fed_inflight_flow_t *f = flow_of(l, cluster, true);
	bool backlog = false;
	int dropped = 0;

	for (int k = 0; k < l->n;) {
		bool found = false;

		if (cluster && !strcmp(l->v[k].cluster, cluster))
			for (int s = 0; s < n_seen && !found; s++)
				found = seen[s] == l->v[k].job_id;
		if (found) {
			drop(l, k);
			dropped++;
			continue;
		}
		/* kept since the previous survey and still on its way: the
		 * winner had copies to take all along */
		if (f && f->last_seen > 0 &&
		    !strcmp(l->v[k].cluster, cluster) &&
		    l->v[k].at <= f->last_seen)
			backlog = true;
		k++;
	}
	if (!f)
		return dropped;
	if (backlog && now > f->last_seen) {
		double dt = (double) (now - f->last_seen);
		double sample = dropped > 0 ? dt / dropped : dt;

		f->s_per_copy = f->s_per_copy > 0.0
					? (f->s_per_copy + sample) / 2.0
					: sample;
	}
	if (dropped > 0)
		f->last_arrival = now;
	if (now > f->last_seen)
		f->last_seen = now;
	return dropped;
}

double pol_fed_copy_prior_s(int rpc_version)
{
	return rpc_version > 0 && rpc_version <= POL_FED_RPC_22_05 ? 1.0 : 0.0;
}

int pol_fed_inflight_set_prior(pol_fed_inflight_list_t *l, const char *cluster,
			       double prior_s)
{
	pol_fed_inflight_flow_t *f = flow_of(l, cluster, true);

	if (!f) {
		errno = EINVAL;
		return -1;
	}
	f->prior_s = prior_s > 0.0 ? prior_s : 0.0;
	return 0;
}

double pol_fed_inflight_s_per_copy(const pol_fed_inflight_list_t *l,
				   const char *cluster)
{
	const pol_fed_inflight_flow_t *f = flow_find(l, cluster);

	if (!f)
		return 0.0;
	return f->s_per_copy > 0.0 ? f->s_per_copy : f->prior_s;
}

double pol_fed_inflight_transit_s(const pol_fed_inflight_list_t *l,
				  const char *cluster)
{
	double s = pol_fed_inflight_s_per_copy(l, cluster);

	return s > 0.0 ? pol_fed_inflight_jobs(l, cluster) * s : 0.0;
}

int pol_fed_inflight_expire(pol_fed_inflight_list_t *l, int64_t now,
			    int max_age_s)
{
	int dropped = 0;

	for (int k = 0; k < l->n;) {
		const pol_fed_inflight_flow_t *f = flow_find(l,
							     l->v[k].cluster);
		int64_t age = now - l->v[k].at;
		/* copies still reach its winner: it is likely on its way */
		bool flowing = f && f->last_arrival > 0 &&
			       now - f->last_arrival <= max_age_s;

		if (l->v[k].at > now || age > POL_FED_INFLIGHT_HARD_S ||
		    (age > max_age_s && !flowing)) {
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

void pol_fed_inflight_load(const pol_fed_inflight_list_t *l,
			   const char *cluster, pol_fed_cluster_load_t *load)
{
	for (int k = 0; k < l->n; k++) {
		const pol_fed_inflight_t *e = &l->v[k];

		if (!cluster || strcmp(e->cluster, cluster))
			continue;
		load->gpus_queued += e->gpus;
		load->jobs_queued++;
		load->queued_gpu_s += (double) e->gpus * (double) e->limit_s;
		if (e->limit_s > load->max_limit_s)
			load->max_limit_s = e->limit_s;
	}
}

int pol_fed_inflight_jobs(const pol_fed_inflight_list_t *l, const char *cluster)
{
	int n = 0;

	for (int k = 0; k < l->n; k++)
		if (cluster && !strcmp(l->v[k].cluster, cluster))
			n++;
	return n;
}

void pol_fed_inflight_free(pol_fed_inflight_list_t *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
