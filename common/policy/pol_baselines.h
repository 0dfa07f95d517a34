/*
 * pol_baselines.h - the baselines an administrator would run instead of
 * Agora, beyond those of pol_policy.h:
 *   backfill-fs  Slurm's priority/multifactor classic fair-share in front
 *                of Slurm's backfill (pol_backfill_fs.c)
 *   tiresias     Tiresias' discretised 2D-LAS with starvation promotion
 *                (pol_tiresias.c)
 */
#ifndef POL_BASELINES_H
#define POL_BASELINES_H

#include "pol_policy.h"

extern const pol_policy_ops_t pol_backfill_fs_ops;
extern const pol_policy_ops_t pol_tiresias_ops;

/*
 * The classic fair-share factor of tenant t among n tenants with decayed
 * usage u[0..n) and raw shares[0..n): 2^(-(u_t/sum u) / (s_t/sum s) /
 * damp), 1 when no tenant has usage (pol_backfill_fs.c).
 */
double pol_backfill_fs_factor(const double *u, const double *shares, int n,
			      int t, double damp);

#endif
