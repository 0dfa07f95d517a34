/*
 * pol_freemap.c - the working free-GPU map of a placement pass
 * (pol_place.h).
 *
 * Per pool and per free count c (1..max GPUs of a node) a two-level bit set
 * of node indices: level 0 has one bit per node, level 1 one bit per
 * non-zero level-0 word.  Finding the first node of a bucket scans level 1
 * (n/4096 words: 3 for 10k nodes) and one level-0 word.  A 64-bit mask per
 * pool says which buckets are non-empty, so best fit is a ctz.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_place.h"

#define NPOOL 2

typedef struct bset {
	uint64_t *b0, *b1;
} bset_t;

struct pol_freemap {
	const pol_cluster_t *c;
	int n, maxg, w0, w1, n_leaves;
	/* everything below lives in 'block' so assign() is one memcpy */
	pol_gpumask_t *free;
	uint8_t *nfree;
	uint8_t *ngpus; /* GPUs of the node if up, else 0 */
	int *leaf_full[NPOOL];
	bset_t bucket[NPOOL][POL_MAX_GPUS_PER_NODE + 1];
	bset_t full[NPOOL];
	void *block;
	size_t block_len;
	/* scalars (copied by assign) */
	int cnt[NPOOL][POL_MAX_GPUS_PER_NODE + 1];
	uint64_t nonempty[NPOOL];
	int free_gpus[NPOOL], cap[NPOOL], maxg_pool[NPOOL], full_gpus[NPOOL];
};

static void bs_set(bset_t *b, int i)
{
	b->b0[i >> 6] |= (uint64_t) 1 << (i & 63);
	b->b1[i >> 12] |= (uint64_t) 1 << ((i >> 6) & 63);
}

static void bs_clr(bset_t *b, int i)
{
	uint64_t *w = &b->b0[i >> 6];

	*w &= ~((uint64_t) 1 << (i & 63));
	if (!*w)
		b->b1[i >> 12] &= ~((uint64_t) 1 << ((i >> 6) & 63));
}

/* First set bit with index > after, or -1. */
static int bs_next(const bset_t *b, int w0n, int w1n, int after)
{
	int start = after + 1, w, w1;
	uint64_t m;

	if (start < 0)
		start = 0;
	w = start >> 6;
	if (w >= w0n)
		return -1;
	m = b->b0[w] & (~(uint64_t) 0 << (start & 63));
	if (m)
		return (w << 6) + __builtin_ctzll(m);
	w++;
	if (w >= w0n)
		return -1;
	w1 = w >> 6;
	m = b->b1[w1] & (~(uint64_t) 0 << (w & 63));
	for (;;) {
		if (m) {
			int ww = (w1 << 6) + __builtin_ctzll(m);

			return (ww << 6) + __builtin_ctzll(b->b0[ww]);
		}
		if (++w1 >= w1n)
			return -1;
		m = b->b1[w1];
	}
}

static int pool_ok(pol_pool_t p)
{
	return (int) p >= 0 && (int) p < NPOOL;
}

/* Move node i from its current buckets to those of mask m. */
static void node_set(pol_freemap_t *fm, int i, pol_gpumask_t m)
{
	const pol_node_t *nd = &fm->c->nodes[i];
	int p = (int) nd->pool, old = fm->nfree[i], nw = pol_popcount(m);
	int all = fm->ngpus[i];

	if (!all)
		return; /* down node: never in a bucket */
	if (old) {
		bs_clr(&fm->bucket[p][old], i);
		if (--fm->cnt[p][old] == 0)
			fm->nonempty[p] &= ~((uint64_t) 1 << (old - 1));
		if (old == all) {
			bs_clr(&fm->full[p], i);
			fm->full_gpus[p] -= all;
			fm->leaf_full[p][nd->leaf] -= all;
		}
	}
	if (nw) {
		bs_set(&fm->bucket[p][nw], i);
		if (fm->cnt[p][nw]++ == 0)
			fm->nonempty[p] |= (uint64_t) 1 << (nw - 1);
		if (nw == all) {
			bs_set(&fm->full[p], i);
			fm->full_gpus[p] += all;
			fm->leaf_full[p][nd->leaf] += all;
		}
	}
	fm->free_gpus[p] += nw - old;
	fm->free[i] = m;
	fm->nfree[i] = (uint8_t) nw;
}

pol_freemap_t *pol_freemap_create(const pol_cluster_t *c)
{
	pol_freemap_t *fm;
	size_t len, off = 0;
	int i, p, k, nb, nleaves;
	char *blk;

	if (!c || c->n_nodes <= 0 || c->n_leaves <= 0) {
		errno = EINVAL;
		return NULL;
	}
	fm = calloc(1, sizeof(*fm));
	if (!fm) {
		errno = ENOMEM;
		return NULL;
	}
	fm->c = c;
	fm->n = c->n_nodes;
	for (i = 0; i < c->n_types; i++)
		if (c->types[i].n_gpus > fm->maxg)
			fm->maxg = c->types[i].n_gpus;
	fm->w0 = (fm->n + 63) / 64;
	fm->w1 = (fm->w0 + 63) / 64;
	nleaves = c->n_leaves;
	fm->n_leaves = nleaves;
	nb = NPOOL * (fm->maxg + 1); /* buckets + full sets */
	len = (size_t) fm->n * (sizeof(pol_gpumask_t) + 2) + 8 +
	      (size_t) NPOOL * nleaves * sizeof(int) +
	      (size_t) nb * (fm->w0 + fm->w1) * sizeof(uint64_t) + 64;
	blk = calloc(1, len);
	if (!blk) {
		free(fm);
		errno = ENOMEM;
		return NULL;
	}
	fm->block = blk;
	fm->block_len = len;
#define CARVE(ptr, count)                                                      \
	do {                                                                   \
		off = (off + 7) & ~(size_t) 7;                                 \
		(ptr) = (void *) (blk + off);                                  \
		off += (size_t) (count) * sizeof(*(ptr));                      \
	} while (0)
	CARVE(fm->free, fm->n);
	for (p = 0; p < NPOOL; p++)
		CARVE(fm->leaf_full[p], nleaves);
	for (p = 0; p < NPOOL; p++) {
		for (k = 1; k <= fm->maxg; k++) {
			CARVE(fm->bucket[p][k].b0, fm->w0);
			CARVE(fm->bucket[p][k].b1, fm->w1);
		}
		CARVE(fm->full[p].b0, fm->w0);
		CARVE(fm->full[p].b1, fm->w1);
	}
	CARVE(fm->nfree, fm->n);
	CARVE(fm->ngpus, fm->n);
#undef CARVE
	if (pol_freemap_reset(fm, c)) {
		pol_freemap_destroy(&fm);
		errno = EINVAL;
		return NULL;
	}
	return fm;
}

int pol_freemap_reset(pol_freemap_t *fm, const pol_cluster_t *c)
{
	int i, p, maxg = 0;

	if (!fm || !c || c->n_nodes != fm->n || c->n_leaves != fm->n_leaves) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < c->n_types; i++)
		if (c->types[i].n_gpus > maxg)
			maxg = c->types[i].n_gpus;
	for (i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].leaf < 0 || c->nodes[i].leaf >= c->n_leaves ||
		    c->nodes[i].type < 0 || c->nodes[i].type >= c->n_types)
			break;
	if (maxg != fm->maxg || i < c->n_nodes) {
		errno = EINVAL;
		return -1;
	}
	fm->c = c;
	memset(fm->block, 0, fm->block_len);
	memset(fm->cnt, 0, sizeof(fm->cnt));
	memset(fm->nonempty, 0, sizeof(fm->nonempty));
	memset(fm->free_gpus, 0, sizeof(fm->free_gpus));
	memset(fm->cap, 0, sizeof(fm->cap));
	memset(fm->maxg_pool, 0, sizeof(fm->maxg_pool));
	memset(fm->full_gpus, 0, sizeof(fm->full_gpus));
	for (i = 0; i < fm->n; i++) {
		const pol_node_t *nd = &c->nodes[i];
		int g = c->types[nd->type].n_gpus;

		p = (int) nd->pool;
		if (!nd->up || !pool_ok(nd->pool) || g <= 0)
			continue;
		fm->ngpus[i] = (uint8_t) g;
		fm->cap[p] += g;
		if (g > fm->maxg_pool[p])
			fm->maxg_pool[p] = g;
		node_set(fm, i, nd->free & pol_node_all_gpus(c, i));
	}
	return 0;
}

int pol_freemap_assign(pol_freemap_t *dst, const pol_freemap_t *src)
{
	if (!dst || !src || dst->n != src->n || dst->maxg != src->maxg ||
	    dst->block_len != src->block_len) {
		errno = EINVAL;
		return -1;
	}
	dst->c = src->c;
	memcpy(dst->block, src->block, src->block_len);
	memcpy(dst->cnt, src->cnt, sizeof(dst->cnt));
	memcpy(dst->nonempty, src->nonempty, sizeof(dst->nonempty));
	memcpy(dst->free_gpus, src->free_gpus, sizeof(dst->free_gpus));
	memcpy(dst->cap, src->cap, sizeof(dst->cap));
	memcpy(dst->maxg_pool, src->maxg_pool, sizeof(dst->maxg_pool));
	memcpy(dst->full_gpus, src->full_gpus, sizeof(dst->full_gpus));
	return 0;
}

bool pol_freemap_same_shape(const pol_freemap_t *a, const pol_freemap_t *b)
{
	return a && b && a->n == b->n && a->n_leaves == b->n_leaves &&
	       a->maxg == b->maxg && a->block_len == b->block_len;
}

void pol_freemap_destroy(pol_freemap_t **fmp)
{
	if (!fmp || !*fmp)
		return;
	free((*fmp)->block);
	free(*fmp);
	*fmp = NULL;
}

const pol_cluster_t *pol_freemap_cluster(const pol_freemap_t *fm)
{
	return fm->c;
}

pol_gpumask_t pol_freemap_node(const pol_freemap_t *fm, int node)
{
	if (!fm || node < 0 || node >= fm->n)
		return 0;
	return fm->free[node];
}

int pol_freemap_free_gpus(const pol_freemap_t *fm, pol_pool_t pool)
{
	return pool_ok(pool) ? fm->free_gpus[pool] : 0;
}

int pol_freemap_capacity(const pol_freemap_t *fm, pol_pool_t pool)
{
	return pool_ok(pool) ? fm->cap[pool] : 0;
}

int pol_freemap_max_node_gpus(const pol_freemap_t *fm, pol_pool_t pool)
{
	return pool_ok(pool) ? fm->maxg_pool[pool] : 0;
}

static int part_ok(const pol_freemap_t *fm, const pol_alloc_part_t *pt)
{
	return pt->node >= 0 && pt->node < fm->n && fm->ngpus[pt->node];
}

bool pol_freemap_fits(const pol_freemap_t *fm, const pol_alloc_t *a)
{
	int i;

	for (i = 0; i < a->n_parts; i++) {
		const pol_alloc_part_t *pt = &a->parts[i];

		if (!part_ok(fm, pt) ||
		    (fm->free[pt->node] & pt->gpus) != pt->gpus)
			return false;
	}
	return true;
}

int pol_freemap_take(pol_freemap_t *fm, const pol_alloc_t *a)
{
	int i;

	if (!fm || !a) {
		errno = EINVAL;
		return -1;
	}
	if (!pol_freemap_fits(fm, a)) {
		errno = EBUSY;
		return -1;
	}
	for (i = 0; i < a->n_parts; i++) {
		int nd = a->parts[i].node;

		node_set(fm, nd, fm->free[nd] & ~a->parts[i].gpus);
	}
	return 0;
}

int pol_freemap_give(pol_freemap_t *fm, const pol_alloc_t *a)
{
	int i;

	if (!fm || !a) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < a->n_parts; i++) {
		const pol_alloc_part_t *pt = &a->parts[i];

		if (!part_ok(fm, pt) || (fm->free[pt->node] & pt->gpus) ||
		    (pt->gpus & ~pol_node_all_gpus(fm->c, pt->node))) {
			errno = EINVAL;
			return -1;
		}
	}
	for (i = 0; i < a->n_parts; i++) {
		int nd = a->parts[i].node;

		node_set(fm, nd, fm->free[nd] | a->parts[i].gpus);
	}
	return 0;
}

void pol_freemap_take_mask(pol_freemap_t *fm, int node, pol_gpumask_t mask)
{
	if (!fm || node < 0 || node >= fm->n || !fm->ngpus[node])
		return;
	if (fm->free[node] & mask)
		node_set(fm, node, fm->free[node] & ~mask);
}

int pol_freemap_best_node(const pol_freemap_t *fm, pol_pool_t pool, int k,
			  int leaf)
{
	uint64_t m;

	if (!pool_ok(pool) || k < 1 || k > fm->maxg)
		return -1;
	m = fm->nonempty[pool] & (~(uint64_t) 0 << (k - 1));
	while (m) {
		int c = __builtin_ctzll(m) + 1, i = -1;

		m &= m - 1;
		if (leaf < 0)
			return bs_next(&fm->bucket[pool][c], fm->w0, fm->w1,
				       -1);
		while ((i = bs_next(&fm->bucket[pool][c], fm->w0, fm->w1, i)) >=
		       0)
			if (fm->c->nodes[i].leaf == leaf)
				return i;
	}
	return -1;
}

int pol_freemap_count_at_least(const pol_freemap_t *fm, pol_pool_t pool, int k)
{
	int c, n = 0;

	if (!pool_ok(pool))
		return 0;
	if (k < 1)
		k = 1;
	for (c = k; c <= fm->maxg; c++)
		n += fm->cnt[pool][c];
	return n;
}

int pol_freemap_next_at_least(const pol_freemap_t *fm, pol_pool_t pool, int k,
			      int after)
{
	int c, best = -1;

	if (!pool_ok(pool))
		return -1;
	if (k < 1)
		k = 1;
	for (c = k; c <= fm->maxg; c++) {
		int i;

		if (!fm->cnt[pool][c])
			continue;
		i = bs_next(&fm->bucket[pool][c], fm->w0, fm->w1, after);
		if (i >= 0 && (best < 0 || i < best))
			best = i;
	}
	return best;
}

int pol_freemap_full_gpus(const pol_freemap_t *fm, pol_pool_t pool)
{
	return pool_ok(pool) ? fm->full_gpus[pool] : 0;
}

int pol_freemap_full_gpus_leaf(const pol_freemap_t *fm, pol_pool_t pool,
			       int leaf)
{
	if (!pool_ok(pool) || leaf < 0 || leaf >= fm->c->n_leaves)
		return 0;
	return fm->leaf_full[pool][leaf];
}

int pol_freemap_next_full(const pol_freemap_t *fm, pol_pool_t pool, int after)
{
	if (!pool_ok(pool))
		return -1;
	return bs_next(&fm->full[pool], fm->w0, fm->w1, after);
}
