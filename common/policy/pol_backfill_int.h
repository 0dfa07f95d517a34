/*
 * pol_backfill_int.h - the backfill scheduler's state, shared by
 * pol_backfill.c (parameters, the main scheduler, the EASY pass, the
 * running jobs' ends), pol_backfill_slots.c (Slurm's plan: the slot map
 * of whole-node reservations) and pol_backfill_plan.c (the will-run test
 * and the pass).  Not part of the API: include pol_backfill.h instead.
 */
#ifndef POL_BACKFILL_INT_H
#define POL_BACKFILL_INT_H

#include <errno.h>

#include "pol_backfill.h"
#include "pol_policy_int.h"

/* Slurm's will-run test groups job ends in windows of 30 s, doubling
 * (cons_common/job_test.c: time_window = 30, bf_window_scale unset). */
#define BF_WILL_RUN_WINDOW 30
#define BF_NKEYS           8
/* will-run results kept per pass (direct-mapped), until a job starts */
#define BF_MEMO 256
/* ends per block of the will-run test's skip (pol_bf.ebo) */
#define BF_EBLK 16

typedef struct bf_memo {
	unsigned gen; /* valid when == pol_bf.gen */
	int total_gpus, nodes, gpn;
	pol_pool_t pool;
	int64_t T;
	pol_alloc_t a;
} bf_memo_t;

typedef struct bf_end {
	int64_t end, id;
	const pol_alloc_t *alloc;
	int node; /* the node of a one-node alloc, else -1 */
	/* the alloc's nodes as bits of node word w when they all lie in one
	 * word of 64 nodes (the will-run test skips an end with no usable
	 * node by one AND), else w = -1 */
	int w;
	uint64_t bits;
} bf_end_t;

/* Set e->node, e->w and e->bits from e->alloc. */
static inline void bf_end_nodes(bf_end_t *e)
{
	const pol_alloc_t *a = e->alloc;
	int p;

	e->node = a->n_parts == 1 ? a->parts[0].node : -1;
	e->w = a->n_parts ? a->parts[0].node / 64 : -1;
	e->bits = 0;
	for (p = 0; p < a->n_parts && e->w >= 0; p++)
		if (a->parts[p].node / 64 != e->w)
			e->w = -1;
		else
			e->bits |= (uint64_t) 1 << (a->parts[p].node % 64);
}

struct pol_bf {
	const pol_placer_t *placer;
	pol_work_t w;
	pol_freemap_t *ex, *sh;
	bf_end_t *ends;
	int ends_cap;
	int64_t window;
	int max_job_test;
	int64_t res;
	bool easy;
	pol_bf_order_f order;
	void *order_arg;
	const pol_freemap_t *base; /* pol_bf_set_base() */
	/* Slurm mode: the slot map, slot i = [sb[i], se[i]) with the node
	 * bit set bits + i * nw (1 = not reserved) */
	int64_t *sb, *se;
	/* i + rise[i]: the first slot r >= i (r + 1 < n_slots) whose
	 * successor frees a node (bits of r + 1 not all in r), else n_slots
	 * (a distance, so that it moves with the slots when one splits) */
	int *rise;
	uint64_t *bits, *avail, *jn;
	/* one job's loop slides its range of slots right: the rises in it,
	 * q (slot indices, in order), those below the scan's qm with their
	 * suffix ANDs in qsuf (nw words each), those from qm on ANDed in
	 * qacc (a two-stack queue: each rise ANDed O(1) times per loop) */
	int *q;
	uint64_t *qsuf, *qacc;
	/* the will-run test's scratch map s->sh between tests of one gen
	 * (sh_gen == gen): the free map with the nodes outside sh_avail
	 * emptied, plus the GPUs given on the nodes of sh_dirty; the next
	 * test resets only those nodes and the ones whose usability changed
	 * instead of copying the whole map */
	uint64_t *sh_avail, *sh_dirty;
	unsigned sh_gen;
	/* the ends' nodes packed for the will-run test's skip: end i has no
	 * usable node when !(avail[ew[i]] & eb[i]) (an end whose nodes span
	 * words has ew = nw, the always-set word after avail, and is tested
	 * node by node); n_fin ends have a finite end (the rest INT64_MAX) */
	int *ew;
	uint64_t *eb;
	/* per block of BF_EBLK ends, the OR of their eb by word (nw + 1
	 * words a block): a block with no usable node is skipped by nw + 1
	 * ANDs */
	uint64_t *ebo;
	size_t ebo_cap;
	int e_cap, n_fin;
	int n_slots, slot_cap, nw;
	int space, recs; /* bf_node_space_size; records Slurm would use */
	bf_memo_t memo[BF_MEMO];
	uint64_t *memo_avail; /* BF_MEMO x nw words */
	unsigned gen;
	int *node_gpus; /* GPUs per node of node_gpus_c */
	pol_gpumask_t *node_mask;
	const pol_cluster_t *node_gpus_c;
	pol_alloc_part_t *parts; /* scratch for partial releases */
	int parts_cap;
	pol_alloc_t *started; /* allocs of jobs backfilled this pass */
	int n_started, started_cap;
};

/* Expected ends in time order, ties by job id (qsort). */
static inline int cmp_end(const void *x, const void *y)
{
	const bf_end_t *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Place j on fm with the placer; 0, or -1 with errno (ENOSPC: no fit). */
static inline int place_take(pol_bf_t *s, pol_freemap_t *fm, const pol_job_t *j,
			     pol_alloc_t *a)
{
	if (s->placer->place(s->placer->arg, fm, j, a))
		return -1;
	return 0;
}

/* pol_backfill.c, for the plan: */
/* Fill s->ends with the running jobs and those started since out[first]
 * (expected end = start + limit, never before now), sorted; the count or
 * -1.  copy: keep copies of the started jobs' allocs in s->started. */
int pol_bf_collect_ends(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
			const pol_actions_t *out, int first, bool copy);
/* Remember a backfilled job's alloc (taken from a) for later will-run
 * tests; s->started is sized once per pass. */
pol_alloc_t *pol_bf_started_push(pol_bf_t *s, pol_alloc_t *a);

/* t rounded down to a multiple of res (toward -infinity). */
static inline int64_t rdown(int64_t t, int64_t res)
{
	return t >= 0 ? t / res * res : -((-t + res - 1) / res) * res;
}

/* pol_backfill_slots.c: the slot map. */
int pol_bf_slots_init(pol_bf_t *s, const pol_cluster_t *c, int64_t now);
/*
 * Nodes usable over [start, end] (inclusive end, as backfill.c compares
 * begin_time <= end_time) into s->avail, and *later = the end of the first
 * slot after start whose successor frees a node (0: none).
 *
 * Slurm's scan goes slot by slot from start, ANDing the slots' nodes and
 * testing each next slot (up to the first one past end) for a node that
 * is not in the running AND.  Between two rises (s->rise) the slots' node
 * sets only shrink, so the running AND is the current slot's set: the
 * first slot the scan stops at is the first rise, and the AND over the
 * range is that of the rises in it and of its last slot.
 *
 * sc carries what one job's loop learns between calls (its start and end
 * only grow, and the slots do not change): sc->i0 >= 0 is the first slot
 * that ends after start (slot_after(start)), else it is searched;
 * sc->ie the last answer for the first slot past end; on return
 * sc->i0 = the slot after the rise that gave *later (slot_after(*later))
 * or -1.  The rises of the range, [r, ie - 1), only move right too: they
 * are kept in a queue (s->q from sc->qh to sc->qt) whose AND is the AND
 * of qsuf[qh] (the rises below qm) and qacc (those from qm on), so that a
 * call ANDs the rises that entered or left the range, not all of them.
 */
typedef struct bf_scan {
	int i0, ie;
	int qh, qm, qt, nx; /* nx: the next rise to push (-1: none yet) */
} bf_scan_t;

void pol_bf_scan_reset(pol_bf_t *s, bf_scan_t *sc);
void pol_bf_slots_avail(pol_bf_t *s, int64_t start, int64_t end, int64_t *later,
			bf_scan_t *sc);
/* Does a reservation of nodes jn over [start, end) meet one already made? */
bool pol_bf_slots_overlap(pol_bf_t *s, int64_t start, int64_t end);
/* Reserve nodes jn over [start, end) (backfill.c _add_reservation()). */
int pol_bf_slots_add(pol_bf_t *s, int64_t start, int64_t end);

/* pol_backfill_plan.c: */
/* Slurm's backfill pass from the head (index i in the order) on. */
int pol_bf_slurm(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		 pol_actions_t *out, int first_start, int i);

#endif
