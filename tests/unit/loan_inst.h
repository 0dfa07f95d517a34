/*
 * loan_inst.h - random reclaim instances shared by the loan unit
 * tests (test_loan.c, test_loan_fewest.c): a seeded generator, an
 * instance of loaned nodes and jobs on 1-3 of them, and the output
 * buffers.  Include after cmocka.h and pol_loan.h.
 */
#ifndef LOAN_INST_H
#define LOAN_INST_H

#define MAXN 9
#define MAXJ 12

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline int rnd(uint64_t *s, int n)
{
	return (int) (rng_next(s) % (uint64_t) n);
}

typedef struct inst {
	int n_loaned, need, n_jobs;
	pol_loan_job_t jobs[MAXJ];
	int nodes[MAXJ][3];
} inst_t;

static inline void make_inst(uint64_t *s, inst_t *x, bool elastic)
{
	int j, k;

	memset(x, 0, sizeof(*x));
	x->n_loaned = 1 + rnd(s, MAXN);
	x->n_jobs = rnd(s, MAXJ + 1);
	x->need = rnd(s, x->n_loaned + 1);
	for (j = 0; j < x->n_jobs; j++) {
		pol_loan_job_t *b = &x->jobs[j];
		int want = 1 + rnd(s, 3);

		b->id = j + 1;
		b->cost = rnd(s, 4) == 0 ? 0 : (double) (1 + rnd(s, 40)) / 4;
		b->start = rnd(s, 1000);
		b->requeue = rnd(s, 8) != 0;
		for (k = 0; k < want; k++) {
			int v = rnd(s, x->n_loaned), q;

			for (q = 0; q < b->n_nodes && x->nodes[j][q] != v; q++)
				;
			if (q == b->n_nodes)
				x->nodes[j][b->n_nodes++] = v;
		}
		b->nodes = x->nodes[j];
		if (elastic && rnd(s, 3) == 0)
			b->shrinkable = rnd(s, b->n_nodes + 1);
	}
}

typedef struct outbuf {
	unsigned char back[MAXN];
	int action[MAXJ], shrink_by[MAXJ];
	pol_loan_reclaim_out_t o;
} outbuf_t;

#endif
