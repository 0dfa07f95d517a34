/*
 * agorad_orphans.c - step 1b of a round: the copies of cancelled jobs.
 *
 * Slurm 22.05 delivers a sibling's copies, and the cancels its origin
 * forwards, one a second (doc/federation.md, "Faults").  A user who
 * cancels a job at its origin in the seconds after agorad pinned it to
 * another cluster cancels the origin's record; the copy still on its way
 * arrives afterwards and starts at the winner, and the forwarded cancel
 * reaches it only when the queue before it has drained (on the harness 48
 * of 130 such copies ran a minute after `scancel -u` at the origin).  Each
 * round, from the surveys: a live copy at one cluster of a job that its
 * origin shows cancelled is cancelled there (pol_fed_orphans decides; a
 * child per cluster sends the cancels, as a user's `scancel -M` would:
 * the cluster that holds the copy cancels it and tells the origin).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad_round_int.h"

/* One cancel's answer from a child. */
typedef struct {
	uint32_t job_id;
	int rc, err;
} ad_reap_msg_t;

/* The id arrays of cluster c's kept survey: its live copies and the jobs
 * it shows cancelled (pointers into cl->survey; false: none to read). */
static bool survey_fates(const ad_cluster_t *cl, const uint32_t **alive,
			 int *n_alive, const uint32_t **cancelled,
			 int *n_cancelled)
{
	ad_survey_hdr_t h;
	size_t fate_b;

	/* a cluster late to answer this round (its last answer stands in
	 * for its load): nothing is read from it or sent to it */
	if (!cl->up || cl->survey_late || !cl->survey ||
	    cl->survey_len < sizeof(h))
		return false;
	memcpy(&h, cl->survey, sizeof(h));
	if (h.jp.n_alive < 0 || h.jp.n_cancelled < 0)
		return false;
	fate_b = (size_t) (h.jp.n_alive + h.jp.n_cancelled) * sizeof(uint32_t);
	if (cl->survey_len < sizeof(h) + fate_b)
		return false;
	*alive = (const uint32_t *) (cl->survey + cl->survey_len - fate_b);
	*n_alive = h.jp.n_alive;
	*cancelled = *alive + h.jp.n_alive;
	*n_cancelled = h.jp.n_cancelled;
	return true;
}

static void reap_child(const ad_round_t *r, int c, int fd)
{
	for (int k = 0; k < r->n_orphans[c]; k++) {
		ad_reap_msg_t m = { .job_id = r->orphans[c][k] };

		m.rc = slurm_kill_job(m.job_id, SIGKILL, 0);
		m.err = m.rc ? slurm_get_errno() : 0;
		(void) write_all(fd, &m, sizeof(m));
	}
}

int orphans_reap(ad_round_t *r, volatile int *stop)
{
	bool want[AD_MAX_CLUSTERS] = { false };
	char *out[AD_MAX_CLUSTERS];
	size_t len[AD_MAX_CLUSTERS];
	uint32_t *cancelled = NULL;
	int n_cancelled = 0, any = 0, done = 0;

	/* every origin's cancelled jobs, in one list */
	for (int c = 0; c < r->n_clusters; c++) {
		const uint32_t *a, *x;
		int na, nx;
		uint32_t *nc;

		if (!survey_fates(&r->clusters[c], &a, &na, &x, &nx) || !nx)
			continue;
		if (!(nc = realloc(cancelled,
				   (size_t) (n_cancelled + nx) * sizeof(*nc))))
			break;
		cancelled = nc;
		memcpy(cancelled + n_cancelled, x, (size_t) nx * sizeof(*nc));
		n_cancelled += nx;
	}
	for (int c = 0; n_cancelled && c < r->n_clusters; c++) {
		const uint32_t *a, *x;
		int na, nx, n;

		if (!survey_fates(&r->clusters[c], &a, &na, &x, &nx) || !na ||
		    !(r->orphans[c] = malloc((size_t) na * sizeof(uint32_t))))
			continue;
		n = pol_fed_orphans(a, na, cancelled, n_cancelled,
				    r->orphans[c]);
		r->n_orphans[c] = n > 0 ? n : 0;
		want[c] = n > 0;
		any += want[c];
	}
	free(cancelled);
	if (any) {
		run_children(r, want, reap_child, out, len, AD_CHILD_LIMIT_S,
			     stop);
		for (int c = 0; c < r->n_clusters; c++) {
			size_t n = want[c] ? len[c] / sizeof(ad_reap_msg_t) : 0;

			for (size_t k = 0; k < n; k++) {
				ad_reap_msg_t m;

				memcpy(&m, out[c] + k * sizeof(m), sizeof(m));
				if (m.rc && m.err != ESLURM_ALREADY_DONE &&
				    m.err != ESLURM_INVALID_JOB_ID) {
					ad_error(
						"JobId=%u on %s: a copy of a job cancelled at its origin: cancel failed: %s",
						m.job_id, r->clusters[c].name,
						slurm_strerror(m.err));
					continue;
				}
				done++;
				ad_info("JobId=%u on %s: a copy of a job cancelled at its origin (it arrived after the cancel): cancelled here",
					m.job_id, r->clusters[c].name);
			}
			if (want[c] && n < (size_t) r->n_orphans[c])
				ad_error(
					"%s: %d copies of jobs cancelled at their origin, %zu answers",
					r->clusters[c].name, r->n_orphans[c],
					n);
			if (want[c])
				free(out[c]); /* NULL for the others */
		}
	}
	for (int c = 0; c < AD_MAX_CLUSTERS; c++) {
		free(r->orphans[c]);
		r->orphans[c] = NULL;
		r->n_orphans[c] = 0;
	}
	return done;
}
