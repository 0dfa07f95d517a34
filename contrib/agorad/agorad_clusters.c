/*
 * agorad_clusters.c - step 0 of a round: the federation's clusters, from
 * slurmdbd (slurmdb_get_info_cluster).  The last list is kept while
 * slurmdbd is down; this file owns the list that owns the records
 * (ad_cluster_t.rec).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "agorad_round_int.h"

static List cluster_list = NULL; /* owns the records */

int refresh_clusters(ad_round_t *r)
{
	List l = slurmdb_get_info_cluster(NULL);
	ListIterator it;
	slurmdb_cluster_rec_t *rec;
	char best[AD_NAME] = "";
	int best_n = 0;

	static bool dbd_down = false;

	if (!l) {
		if (r->n_clusters) {
			if (!dbd_down)
				ad_error(
					"slurmdbd does not answer: keeping the last list of %d clusters",
					r->n_clusters);
			dbd_down = true;
			return 0;
		}
		ad_error("cannot read the clusters from slurmdbd: %s",
			 slurm_strerror(slurm_get_errno()));
		return -1;
	}
	/* the federation with the most member clusters (one per site) */
	it = slurm_list_iterator_create(l);
	while ((rec = slurm_list_next(it))) {
		ListIterator it2;
		slurmdb_cluster_rec_t *r2;
		int n = 0;

		if (!rec->fed.name || !rec->fed.name[0])
			continue;
		it2 = slurm_list_iterator_create(l);
		while ((r2 = slurm_list_next(it2)))
			if (r2->fed.name &&
			    !strcmp(r2->fed.name, rec->fed.name))
				n++;
		slurm_list_iterator_destroy(it2);
		if (n > best_n) {
			best_n = n;
			scopy(best, rec->fed.name, sizeof(best));
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
	if (strcmp(best, r->fed_name))
		ad_info("federation %s: %d clusters", best, best_n);
	scopy(r->fed_name, best, sizeof(r->fed_name));
	ad_cluster_t old[AD_MAX_CLUSTERS];
	int n_old = r->n_clusters;

	memcpy(old, r->clusters, n_old * sizeof(*old));
	for (int c = 0; c < n_old; c++) {
		free(r->clusters[c].busy);
		r->clusters[c].busy = NULL;
	}
	r->n_clusters = 0;
	it = slurm_list_iterator_create(l);
	while ((rec = slurm_list_next(it)) && r->n_clusters < AD_MAX_CLUSTERS) {
		ad_cluster_t *c;

		if (!rec->fed.name || strcmp(rec->fed.name, r->fed_name))
			continue;
		if ((rec->fed.state & CLUSTER_FED_STATE_BASE) !=
			    CLUSTER_FED_STATE_ACTIVE ||
		    (rec->fed.state & CLUSTER_FED_STATE_DRAIN))
			continue; /* not taking new jobs */
		c = &r->clusters[r->n_clusters++];
		memset(c, 0, sizeof(*c));
		scopy(c->name, rec->name, sizeof(c->name));
		c->rec = rec;
		/* how fast it takes copies before that is measured: Slurm
		 * 22.05 one a second (pol_fed_inflight.h) */
		(void) pol_fed_inflight_set_prior(
			&r->inflight, c->name,
			pol_fed_copy_prior_s(rec->rpc_version));
		for (int o = 0; o < n_old; o++)
			if (old[o].name[0] && !strcmp(old[o].name, c->name)) {
				c->up = old[o].up;
				c->backoff = old[o].backoff;
				c->survey = old[o].survey;
				c->survey_len = old[o].survey_len;
				c->jobs_update = old[o].jobs_update;
				c->survey_at = old[o].survey_at;
				c->survey_late = old[o].survey_late;
				c->late_child = old[o].late_child;
				c->will_run_at = old[o].will_run_at;
				/* where its usage came from: logged when it
				 * changes */
				memcpy(c->usage_src, old[o].usage_src,
				       sizeof(c->usage_src));
				memcpy(c->save_dir, old[o].save_dir,
				       sizeof(c->save_dir));
				c->save_dir_at = old[o].save_dir_at;
				c->preempt_none = old[o].preempt_none;
				old[o].name[0] = '\0'; /* taken */
			}
	}
	slurm_list_iterator_destroy(it);
	for (int o = 0; o < n_old; o++)
		if (old[o].name[0]) { /* left the federation */
			free(old[o].survey);
			late_child_end(&old[o].late_child);
		}
	if (cluster_list)
		slurm_list_destroy(cluster_list);
	cluster_list = l;
	return 0;
}

void clusters_fini(ad_round_t *r)
{
	if (cluster_list)
		slurm_list_destroy(cluster_list);
	cluster_list = NULL;
	for (int c = 0; c < r->n_clusters; c++) {
		free(r->clusters[c].busy);
		r->clusters[c].busy = NULL;
		free(r->clusters[c].survey);
		r->clusters[c].survey = NULL;
		late_child_end(&r->clusters[c].late_child);
	}
	r->n_clusters = 0;
}
