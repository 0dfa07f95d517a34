/*
 * agorad_willrun.c - step 2's requests: which will-runs a round sends
 * (the core's pol_fed_willrun_pick), and the answers kept between rounds.
 * A will-run takes slurmctld's job and node write locks; one per shape
 * and cluster, kept while it stands, at most POL_FED_WILLRUN_MAX_ASKS
 * new ones per cluster and round.
 */
#include <stdlib.h>
#include <string.h>

#include "agorad_round_int.h"

static ad_willrun_t *kept_find(ad_round_t *r, const char *cluster,
			       const char *key)
{
	for (int k = 0; k < r->n_wr; k++)
		if (!strcmp(r->wr[k].cluster, cluster) &&
		    !strcmp(r->wr[k].key, key))
			return &r->wr[k];
	return NULL;
}

/* Answers too old to stand are dropped. */
static void kept_prune(ad_round_t *r, time_t now)
{
	int n = 0;

	for (int k = 0; k < r->n_wr; k++) {
		if (now - r->wr[k].kept.asked < POL_FED_WILLRUN_MAX_AGE_S &&
		    now >= r->wr[k].kept.asked) {
			r->wr[n++] = r->wr[k];
			continue;
		}
		free(r->wr[k].key);
	}
	r->n_wr = n;
}

void willrun_plan(ad_round_t *r, time_t now)
{
	size_t cells = (size_t) r->n_jobs * r->n_clusters + 1;
	pol_fed_willrun_kept_t *kept;
	pol_fed_willrun_act_t *act;
	int *first; /* the first job of each shape */
	bool *moot;

	kept_prune(r, now);
	r->shape = calloc((size_t) r->n_jobs + 1, sizeof(char *));
	r->wr_act = calloc(cells, sizeof(*r->wr_act)); /* 0: ASK */
	r->wr_plan = calloc(cells, sizeof(*r->wr_plan));
	kept = calloc((size_t) r->n_jobs + 1, sizeof(*kept));
	act = calloc((size_t) r->n_jobs + 1, sizeof(*act));
	first = calloc((size_t) r->n_jobs + 1, sizeof(*first));
	moot = calloc((size_t) r->n_jobs + 1, sizeof(*moot));
	if (!r->shape || !r->wr_act || !r->wr_plan || !kept || !act || !first ||
	    !moot) {
		/* no memory: every job is asked, unshared, as it was */
		free(r->wr_act);
		free(r->wr_plan);
		r->wr_act = NULL;
		r->wr_plan = NULL;
		goto out;
	}
	for (int i = 0; i < r->n_jobs; i++)
		if (pol_fed_hold_bids(r->jobs[i].act) &&
		    !r->jobs[i].too_long[0])
			r->shape[i] = shape_key(&r->jobs[i]);
	for (int c = 0; c < r->n_clusters; c++) {
		const ad_cluster_t *cl = &r->clusters[c];
		int n = 0;

		if (!cl->up)
			continue;
		/* the shapes of the jobs that bid on c, in the jobs' order */
		for (int i = 0; i < r->n_jobs; i++) {
			const ad_willrun_t *w;
			int s;

			if (!r->shape[i] || !eligible(&r->jobs[i], cl->name))
				continue;
			for (s = 0; s < n; s++)
				if (!strcmp(r->shape[first[s]], r->shape[i]))
					break;
			if (s < n)
				continue;
			first[n] = i;
			w = kept_find(r, cl->name, r->shape[i]);
			kept[n++] = w ? w->kept : (pol_fed_willrun_kept_t){ 0 };
		}
		/* a shape whose answer cannot change its bid here (no
		 * preemption, a deep queue) keeps its answer up to a minute */
		for (int k = 0; k < n; k++)
			moot[k] = cl->preempt_none &&
				  pol_fed_willrun_moot(&cl->load,
						       r->jobs[first[k]].gpus,
						       false, now);
		(void) pol_fed_willrun_pick_moot(
			kept, moot, n, now, cl->gpus_free,
			POL_FED_WILLRUN_MAX_AGE_S, POL_FED_WILLRUN_MOOT_AGE_S,
			POL_FED_WILLRUN_MAX_ASKS, act);
		/* a cluster late to answer its survey (it stands on its last
		 * answer) is asked nothing this round: a will-run would wait
		 * for the same locks.  Its kept answers stand; a shape
		 * without one waits for the next round */
		for (int k = 0; cl->survey_late && k < n; k++)
			if (act[k] == POL_FED_WILLRUN_ASK)
				act[k] = POL_FED_WILLRUN_DEFER;
		for (int i = 0; i < r->n_jobs; i++) {
			size_t at = (size_t) i * r->n_clusters + c;
			const ad_willrun_t *w;
			int s;

			if (!r->shape[i])
				continue;
			for (s = 0; s < n; s++)
				if (!strcmp(r->shape[first[s]], r->shape[i]))
					break;
			if (s == n)
				continue;
			r->wr_act[at] = act[s];
			if (act[s] == POL_FED_WILLRUN_REUSE &&
			    (w = kept_find(r, cl->name, r->shape[i])))
				r->wr_plan[at] = w->m;
		}
	}
out:
	free(kept);
	free(act);
	free(first);
	free(moot);
}

void willrun_keep(ad_round_t *r, int c, const ad_plan_msg_t *m, time_t now)
{
	const char *key = r->shape ? r->shape[m->idx] : NULL;
	size_t at = (size_t) m->idx * r->n_clusters + c;
	ad_willrun_t *w, *nw;

	if (!key || !r->wr_act || r->wr_act[at] != POL_FED_WILLRUN_ASK)
		return;
	if (!(w = kept_find(r, r->clusters[c].name, key))) {
		if (!(nw = realloc(r->wr, (r->n_wr + 1) * sizeof(*r->wr))))
			return;
		r->wr = nw;
		w = &r->wr[r->n_wr];
		memset(w, 0, sizeof(*w));
		if (!(w->key = strdup(key)))
			return;
		scopy(w->cluster, r->clusters[c].name, sizeof(w->cluster));
		r->n_wr++;
	}
	w->m = *m;
	w->kept = (pol_fed_willrun_kept_t){
		.have = true,
		.asked = now,
		.free_then = r->clusters[c].gpus_free,
		.valid = m->valid != 0,
	};
}

void willrun_reset(ad_round_t *r)
{
	for (int i = 0; r->shape && i < r->n_jobs; i++)
		free(r->shape[i]);
	free(r->shape);
	free(r->wr_act);
	free(r->wr_plan);
	r->shape = NULL;
	r->wr_act = NULL;
	r->wr_plan = NULL;
}

void willrun_fini(ad_round_t *r)
{
	willrun_reset(r);
	for (int k = 0; k < r->n_wr; k++)
		free(r->wr[k].key);
	free(r->wr);
	r->wr = NULL;
	r->n_wr = 0;
}
