/*
 * agorad_usage.c - where the survey reads a cluster's usage per app, and
 * what agorad says about it (issue 19, medium 15).
 *
 * slurmctld/agora's "scontrol show config" rows (Credit[<app>]=...) are
 * answered for any caller, so under PrivateData with usage, accounts,
 * users or jobs they are hidden from everyone, SlurmUser and root
 * included (the plugstack hook is not told who asks).  The rows are a
 * rendering of one file, StateSaveLocation/agora_view.json, written by
 * site_factor/agora (mode 0600, SlurmUser) after its passes; PrivateData
 * does not apply to a file.  So the survey reads, in this order:
 *   1. the view file at the StateSaveLocation the cluster's slurmctld
 *      reports (slurm_load_ctl_conf), when agorad can read it: agorad
 *      runs as SlurmUser or root on the controller host, or the
 *      StateSaveLocation is shared (as HA controllers share it).  The
 *      file must name the cluster surveyed (its "cluster"), so that two
 *      clusters configured with one StateSaveLocation do not swap usage;
 *   2. else the plugstack rows, as before (22.05 only);
 *   3. else nothing: the auction's and the credit exchange's usage for
 *      that cluster is empty, and agorad says so (once per change) with
 *      the reason, rather than silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agora_view.h"
#include "agorad_round_int.h"

/* Same name as site_factor/agora's (plugins/common/agora_hold.h). */
#define AD_VIEW_FILE "agora_view.json"

int usage_from_view(const char *state_dir, const char *cluster,
		    ad_usage_t **out, char *src, size_t src_size)
{
	agora_err_t err = { { 0 } };
	agora_view_t v;
	ad_usage_t *us;
	char path[4096];
	int n;

	*out = NULL;
	if (!state_dir || !*state_dir) {
		snprintf(src, src_size, "no StateSaveLocation reported");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", state_dir, AD_VIEW_FILE);
	if (agora_view_load(path, &v, NULL, &err)) {
		snprintf(src, src_size, "%s", err.text);
		return -1;
	}
	if (v.cluster[0] && cluster && strcmp(v.cluster, cluster)) {
		snprintf(src, src_size, "%s is cluster %s's, not %s's", path,
			 v.cluster, cluster);
		agora_view_free(&v);
		return -1;
	}
	us = calloc(v.n_apps + 1, sizeof(*us));
	if (!us) {
		snprintf(src, src_size, "%s: out of memory", path);
		agora_view_free(&v);
		return -1;
	}
	for (size_t i = 0; i < v.n_apps; i++) {
		scopy(us[i].app, v.apps[i].name, sizeof(us[i].app));
		us[i].usage = v.apps[i].usage;
		us[i].quota = v.apps[i].quota;
	}
	snprintf(src, src_size, "%s", path);
	*out = us;
	n = (int) v.n_apps;
	agora_view_free(&v);
	return n;
}

void usage_note(ad_cluster_t *c, const char *src, int n)
{
	char now[sizeof(c->usage_src)];

	snprintf(now, sizeof(now), "%s", src);
	if (!strcmp(now, c->usage_src))
		return;
	if (!strncmp(now, "none: ", 6))
		ad_error(
			"%s: usage per app unavailable (%s): team credit leaves this cluster out; run agorad as SlurmUser or root where StateSaveLocation can be read (doc/federation.md)",
			c->name, now + 6);
	else
		ad_info("%s: usage per app (%d apps) from %s", c->name, n, now);
	snprintf(c->usage_src, sizeof(c->usage_src), "%s", now);
}

/* The Credit[<app>] items of slurmctld/agora in the plugstack items l:
 * *out (malloc'ed, NULL if none); returns their count.  *seen: the plugin
 * answered; *hidden: it hid the rows (PrivateData: "Credit=hidden"). */
#if AGORA_HAVE_CTLD_PLUGSTACK
static int survey_usage(List l, ad_usage_t **out, bool *seen, bool *hidden)
{
	ListIterator it = slurm_list_iterator_create(l);
	ad_plugin_params_t *pp;
	ad_usage_t *us = NULL;
	int n = 0, cap = 0;

	while ((pp = slurm_list_next(it))) {
		ListIterator kit;
		ad_pair_t *kp;

		if (!pp->name || strcmp(pp->name, "slurmctld/agora"))
			continue;
		*seen = true;
		kit = slurm_list_iterator_create(pp->key_pairs);
		while ((kp = slurm_list_next(kit))) {
			const char *u, *q;
			size_t nl;

			if (kp->name && !strcmp(kp->name, "Credit"))
				*hidden = true;
			if (!kp->name || strncmp(kp->name, "Credit[", 7) ||
			    !kp->value)
				continue;
			nl = strlen(kp->name);
			if (nl < 9 || kp->name[nl - 1] != ']')
				continue;
			if (n == cap) {
				int ncap = cap ? 2 * cap : 16;
				ad_usage_t *nu = realloc(us,
							 ncap * sizeof(*us));

				if (!nu) {
					ad_error(
						"out of memory: no usage per app");
					free(us);
					us = NULL;
					n = 0;
					break;
				}
				us = nu;
				cap = ncap;
			}
			memset(&us[n], 0, sizeof(*us));
			snprintf(us[n].app, AD_NAME, "%.*s", (int) (nl - 8),
				 kp->name + 7);
			u = strstr(kp->value, "usage=");
			q = strstr(kp->value, "quota=");
			us[n].usage = u ? atof(u + 6) : 0;
			us[n].quota = q ? atof(q + 6) : 0;
			n++;
		}
		slurm_list_iterator_destroy(kit);
		if (cap && !us)
			break;
	}
	slurm_list_iterator_destroy(it);
	*out = us;
	return n;
}
#endif

/* The usage per app of cluster c into *us, h->n_usage and h->usage_src:
 * slurmctld's view file first (PrivateData hides the plugstack rows from
 * every caller), then the rows (agorad_usage.c).  The view file's
 * directory is the last configuration read's StateSaveLocation while
 * that is under AD_CONF_REREAD_S old: during a burst a sibling busy
 * taking the copies answered each read a second or more late, and the
 * configuration was one of three reads per survey.  The configuration
 * is read (h->conf_read) when none is kept, when it is old, and on
 * 22.05 when the view file cannot be read (the rows are in it). */
void survey_usage_any(const ad_round_t *r, int c, ad_survey_hdr_t *h,
		      ad_usage_t **us)
{
	const ad_cluster_t *cl = &r->clusters[c];
	const char *me = cl->name;
	time_t now = time(NULL);
	slurm_conf_t *cf = NULL;
	char view_why[160];

	if (cl->save_dir[0] && now >= cl->save_dir_at &&
	    now - cl->save_dir_at < AD_CONF_REREAD_S) {
		if ((h->n_usage = usage_from_view(cl->save_dir, me, us,
						  view_why,
						  sizeof(view_why))) >= 0) {
			snprintf(h->usage_src, sizeof(h->usage_src), "%s",
				 view_why);
			return;
		}
		h->n_usage = 0;
#if !AGORA_HAVE_CTLD_PLUGSTACK
		snprintf(h->usage_src, sizeof(h->usage_src), "none: %s",
			 view_why);
		return;
#endif
	}
	if (slurm_load_ctl_conf(0, &cf)) {
		snprintf(h->usage_src, sizeof(h->usage_src),
			 "none: no configuration: %s",
			 slurm_strerror(slurm_get_errno()));
		return;
	}
	h->conf_read = 1;
	h->preempt_none = !cf->preempt_type || !cf->preempt_type[0] ||
			  !strcmp(cf->preempt_type, "preempt/none");
	if (cf->state_save_location &&
	    strlen(cf->state_save_location) < sizeof(h->save_dir))
		snprintf(h->save_dir, sizeof(h->save_dir), "%s",
			 cf->state_save_location);
	/* else none kept: read every round */
	if ((h->n_usage = usage_from_view(cf->state_save_location, me, us,
					  view_why, sizeof(view_why))) >= 0) {
		snprintf(h->usage_src, sizeof(h->usage_src), "%s", view_why);
	} else {
		h->n_usage = 0;
#if AGORA_HAVE_CTLD_PLUGSTACK
		bool seen = false, hidden = false;

		if (cf->slurmctld_plugstack_conf)
			h->n_usage = survey_usage(cf->slurmctld_plugstack_conf,
						  us, &seen, &hidden);
		if (seen && !hidden)
			snprintf(h->usage_src, sizeof(h->usage_src),
				 "scontrol show config (%s)", view_why);
		else
			snprintf(h->usage_src, sizeof(h->usage_src),
				 "none: %s; scontrol show config: %s", view_why,
				 hidden ? "Credit rows hidden by PrivateData"
					: "no slurmctld/agora");
#else
		/* 23.02+: no SlurmctldPlugstack, the view file only */
		snprintf(h->usage_src, sizeof(h->usage_src), "none: %s",
			 view_why);
#endif
	}
	slurm_free_ctl_conf(cf);
}
