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
