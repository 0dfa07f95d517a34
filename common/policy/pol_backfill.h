/*
 * pol_backfill.h - the backfill machinery of pol_backfill.c, shared by
 * policies that put their own priority order in front of it
 * (backfill-fs).
 *
 * A pol_bf_t is a backfill scheduler with its parameters (see the top of
 * pol_backfill.c).  pol_bf_create() parses the backfill keys together with
 * the caller's extra keys xkeys (NULL-terminated; defaults in xvals on
 * entry, parsed values on return), so one "k=v" string configures both.
 * pol_bf_decide() runs one pass; order, when set, fills idx[0..n_pending)
 * with the pending jobs in priority order (highest first) instead of
 * pol_order_pending().
 *
 * Ownership: the caller owns the pol_bf_t (pol_bf_destroy()); it borrows
 * the placer.
 */
#ifndef POL_BACKFILL_H
#define POL_BACKFILL_H

#include "pol_policy.h"

typedef struct pol_bf pol_bf_t;

typedef int (*pol_bf_order_f)(void *arg, const pol_snapshot_t *snap,
			      int64_t now, int *idx);

pol_bf_t *pol_bf_create(const char *policy, const char *params,
			const char *const *xkeys, double *xvals,
			const pol_placer_t *placer, agora_err_t *err);
void pol_bf_set_order(pol_bf_t *bf, pol_bf_order_f order, void *arg);
/* base (may be NULL, the default): the next passes start from a copy of
 * this free map instead of the cluster's free GPUs (a caller that has
 * placed jobs of its own this pass: agora's leftover pass, left_bf).  The
 * map is borrowed; the caller keeps it alive while it is set. */
void pol_bf_set_base(pol_bf_t *bf, const pol_freemap_t *base);
int pol_bf_decide(pol_bf_t *bf, const pol_snapshot_t *snap, int64_t now,
		  pol_actions_t *out);
void pol_bf_destroy(pol_bf_t *bf);

#endif
