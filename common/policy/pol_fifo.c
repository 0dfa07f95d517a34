/*
 * pol_fifo.c - "fifo": Slurm's main scheduler without backfill.
 *
 * Jobs are tried in priority order (band, priority, submit, id; with equal
 * priorities that is submit order).  The first job of a pool that does
 * not fit blocks its pool: no later job of that pool starts in this pass
 * (head-of-line blocking, like slurmctld's schedule() marking a partition
 * as blocked once a job is held for Resources).  No parameters.
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_policy_int.h"

typedef struct fifo_state {
	const pol_placer_t *placer;
	pol_work_t w;
} fifo_state_t;

static void *fifo_create(const char *params, const pol_placer_t *placer,
			 agora_err_t *err)
{
	static const char *const keys[] = { NULL };
	fifo_state_t *s;

	if (pol_params_parse("fifo", params, keys, NULL, err))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->placer = placer;
	return s;
}

static int fifo_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		       pol_actions_t *out)
{
	fifo_state_t *s = state;
	unsigned blocked = 0;
	int i;

	(void) now;
	if (pol_work_sync(&s->w, snap->cluster, snap->n_pending) ||
	    pol_order_pending(snap, s->w.idx))
		return -1;
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[s->w.idx[i]];
		unsigned bit = 1u << (j->pool & 31);
		pol_alloc_t a;

		if (blocked & bit)
			continue;
		if (s->placer->place(s->placer->arg, s->w.fm, j, &a)) {
			if (errno != ENOSPC)
				return -1;
			blocked |= bit;
			if (pol_actions_add(out, POL_ACT_HOLD, j->id, NULL, 0,
					    "Resources"))
				return -1;
			if (blocked == 3u)
				break;
			continue;
		}
		if (pol_freemap_take(s->w.fm, &a) ||
		    pol_actions_add(out, POL_ACT_START, j->id, &a, 0, NULL)) {
			pol_alloc_free(&a);
			return -1;
		}
		pol_alloc_free(&a);
	}
	return 0;
}

static void fifo_destroy(void *state)
{
	fifo_state_t *s = state;

	if (!s)
		return;
	pol_work_free(&s->w);
	free(s);
}

const pol_policy_ops_t pol_fifo_ops = {
	.name = "fifo",
	.create = fifo_create,
	.decide = fifo_decide,
	.destroy = fifo_destroy,
};
