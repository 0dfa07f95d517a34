/*
 * pol_place_subset.c - best GPU subsets inside one node type (see
 * pol_place_subset.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_place_subset.h"

int pol_place_type_frag(const pol_place_type_t *t, pol_gpumask_t r)
{
	int i, f = 0;

	for (i = 0; i < t->n_groups; i++) {
		pol_gpumask_t x = r & t->groups[i];

		f += x && x != t->groups[i];
	}
	return f;
}

/* worst level among the GPUs of s (0 for <= 1 GPU) */
int pol_place_type_level(const pol_place_type_t *t, pol_gpumask_t s)
{
	int lev = 0;
	pol_gpumask_t m = s;

	while (m) {
		int i = __builtin_ctzll(m);

		m &= m - 1;
		while (lev < POL_PLACE_NODE_LEVELS - 1 &&
		       (s & ~t->near[i][lev]))
			lev++;
	}
	return lev;
}

static int better(int lev, int df, pol_gpumask_t sel, const pol_subset_t *cur)
{
	if (cur->level < 0)
		return 1;
	if (lev != cur->level)
		return lev < cur->level;
	if (df != cur->dfrag)
		return df < cur->dfrag;
	return sel < cur->sel;
}

static void memo_fill(pol_place_type_t *t, pol_gpumask_t f)
{
	pol_subset_t *row = &t->memo[f * (pol_gpumask_t) (t->n + 1)];
	int f0 = pol_place_type_frag(t, f), k;
	pol_gpumask_t s = f;

	for (k = 0; k <= t->n; k++)
		row[k].level = -1;
	for (;;) {
		int lev = pol_place_type_level(t, s);
		int df = pol_place_type_frag(t, f & ~s) - f0;
		pol_subset_t *e = &row[pol_popcount(s)];

		if (better(lev, df, s, e)) {
			e->level = (int8_t) lev;
			e->dfrag = (int16_t) df;
			e->sel = s;
		}
		if (!s)
			break;
		s = (s - 1) & f;
	}
	t->done[f] = 1;
}

/* greedy for large node types: grow from every seed, keep the best */
static pol_subset_t greedy(const pol_place_type_t *t, pol_gpumask_t f, int k)
{
	pol_subset_t best = { 0, -1, 0 };
	int f0 = pol_place_type_frag(t, f);
	pol_gpumask_t seeds = f;

	if (k == 0) {
		best.level = 0;
		return best;
	}
	while (seeds) {
		int i = __builtin_ctzll(seeds), got = 1, lev = 0;
		pol_gpumask_t s = (pol_gpumask_t) 1 << i;

		seeds &= seeds - 1;
		while (got < k) {
			pol_gpumask_t cands = f & ~s;
			int bj = -1, bl = POL_PLACE_NODE_LEVELS;

			while (cands) {
				int j = __builtin_ctzll(cands), l = lev;

				cands &= cands - 1;
				while (l < POL_PLACE_NODE_LEVELS - 1 &&
				       (s & ~t->near[j][l]))
					l++;
				if (l < bl) {
					bl = l;
					bj = j;
				}
			}
			s |= (pol_gpumask_t) 1 << bj;
			lev = bl;
			got++;
		}
		if (better(lev, pol_place_type_frag(t, f & ~s) - f0, s,
			   &best)) {
			best.level = (int8_t) lev;
			best.dfrag = (int16_t) (pol_place_type_frag(t, f & ~s) -
						f0);
			best.sel = s;
		}
	}
	return best;
}

/* best k-subset of free mask f (f has >= k GPUs) */
pol_subset_t pol_place_type_best(pol_place_type_t *t, pol_gpumask_t f, int k)
{
	if (!t->memo)
		return greedy(t, f, k);
	if (!t->done[f])
		memo_fill(t, f);
	return t->memo[f * (pol_gpumask_t) (t->n + 1) + (pol_gpumask_t) k];
}

int pol_place_type_init(pol_place_type_t *a, const pol_node_type_t *t)
{
	int i, j, l, n = t->n_gpus;

	memset(a, 0, sizeof(*a));
	a->t = *t;
	a->n = n < 0 ? 0 : n;
	a->all = n >= 64 ? ~(pol_gpumask_t) 0 : (((pol_gpumask_t) 1 << n) - 1);
	for (i = 0; i < n; i++)
		for (l = 0; l < POL_PLACE_NODE_LEVELS; l++) {
			pol_gpumask_t m = 0;

			for (j = 0; j < n; j++)
				if (i == j || t->level[i][j] <= l ||
				    l == POL_PLACE_NODE_LEVELS - 1)
					m |= (pol_gpumask_t) 1 << j;
			a->near[i][l] = m;
		}
	a->groups = malloc(sizeof(pol_gpumask_t) *
			   (size_t) (n * POL_PLACE_NODE_LEVELS + 1));
	if (!a->groups)
		return -1;
	for (l = 0; l < POL_PLACE_NODE_LEVELS; l++)
		for (i = 0; i < n; i++) {
			pol_gpumask_t g = a->near[i][l];
			int k;

			if (pol_popcount(g) < 2)
				continue;
			for (k = 0; k < a->n_groups; k++)
				if (a->groups[k] == g)
					break;
			if (k == a->n_groups)
				a->groups[a->n_groups++] = g;
		}
	if (n <= POL_TOPO_MEMO_GPUS) {
		size_t masks = (size_t) 1 << n;

		a->memo = malloc(masks * (size_t) (n + 1) *
				 sizeof(pol_subset_t));
		a->done = calloc(masks, 1);
		if (!a->memo || !a->done)
			return -1;
	}
	return 0;
}

void pol_place_type_fini(pol_place_type_t *a)
{
	free(a->groups);
	free(a->memo);
	free(a->done);
}
