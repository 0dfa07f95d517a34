/*
 * Fuzz target: a decision pass of the agora policies on an arbitrary
 * snapshot (common/policy/pol_agora.c).  The input drives a small cluster and
 * up to four passes of pending and running jobs whose every field may be
 * anything; the policy must never fail a pass (only a broken snapshot as
 * a whole may), whatever the jobs say.
 */
#include <stdlib.h>
#include <string.h>

#include "pol_agora.h"
#include "fuzz.h"

typedef struct reader {
	const uint8_t *p;
	size_t n;
} reader_t;

static unsigned byte(reader_t *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

/* Mostly a small number around base, sometimes 4 raw bytes. */
static int64_t num(reader_t *r, int64_t base)
{
	unsigned b = byte(r);
	uint32_t v;

	if (b < 0xf0)
		return base + (int64_t) (b % 16) - 2;
	v = byte(r) | byte(r) << 8 | byte(r) << 16 | (uint32_t) byte(r) << 24;
	if (b == 0xff)
		return (int64_t) v << 31; /* far beyond any time */
	return (int32_t) v;
}

static int inum(reader_t *r, int base)
{
	int64_t v = num(r, base);

	return v > INT32_MAX || v < INT32_MIN ? (int) (v >> 32) : (int) v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	reader_t r = { data, size };
	agora_conf_t conf;
	agora_err_t err;
	pol_cluster_t *c;
	pol_agora_policy_t *a;
	pol_actions_t out = { 0 };
	pol_job_t pend[32], run[16];
	pol_alloc_part_t parts[16][2];
	int nn = 1 + (int) (byte(&r) % 6), g = 1 + (int) (byte(&r) % 8);
	bool auctions = byte(&r) & 1;
	int64_t now = 1000;
	int pass, i, k;

	if (!(c = pol_cluster_uniform(nn, g, 2)))
		return 0;
	agora_conf_defaults(&conf);
	if (!(a = pol_agora_policy_create_conf(&conf, auctions, "fuzz", NULL,
					       &err))) {
		pol_cluster_destroy(&c);
		return 0;
	}
	for (pass = 0; pass < 4 && r.n; pass++) {
		pol_snapshot_t s = { c,
				     pend,
				     (int) (byte(&r) % 33),
				     run,
				     (int) (byte(&r) % 17),
				     (int) (byte(&r) % 8) };

		for (i = 0; i < nn; i++)
			c->nodes[i].free = pol_node_all_gpus(c, i) & byte(&r);
		for (i = 0; i < s.n_pending; i++) {
			pol_job_t *j = &pend[i];

			memset(j, 0, sizeof(*j));
			j->id = 1 + i;
			j->tenant = inum(&r, 2);
			j->nodes = inum(&r, 1) / 2;
			j->gpus_per_node = inum(&r, 2);
			j->total_gpus = inum(&r, 2);
			j->min_gpus = inum(&r, j->total_gpus);
			j->max_gpus = inum(&r, j->total_gpus);
			j->pool = (pol_pool_t) (byte(&r) % 3 == 2 ? 7 : 0);
			j->band = inum(&r, 0);
			j->submit = num(&r, 500);
			j->time_limit = num(&r, 600);
			j->attained = num(&r, 0);
			j->requeueable = byte(&r) & 1;
			j->dataset = -1;
			j->remaining = -1;
		}
		for (i = 0; i < s.n_running; i++) {
			pol_job_t *j = &run[i];
			int np = 1 + (int) (byte(&r) % 2);

			memset(j, 0, sizeof(*j));
			j->id = 100 + i;
			j->state = POL_JOB_RUNNING;
			j->tenant = inum(&r, 2);
			j->start = num(&r, now - 300);
			j->time_limit = num(&r, 600);
			j->requeueable = byte(&r) & 1;
			for (k = 0; k < np; k++) {
				parts[i][k].node = inum(&r, nn / 2);
				parts[i][k].gpus = byte(&r);
				j->total_gpus += pol_popcount(parts[i][k].gpus);
			}
			j->alloc.parts = parts[i];
			/* a count beyond the array would be a lie about memory
			 * that no check can catch: negative or up to np */
			j->alloc.n_parts = byte(&r) % 8 ? np : inum(&r, 0);
			if (j->alloc.n_parts > np)
				j->alloc.n_parts = np;
			j->min_gpus = j->max_gpus = j->total_gpus;
			j->dataset = -1;
			j->remaining = -1;
		}
		pol_actions_clear(&out);
		if (pol_agora_policy_decide(a, &s, now, &out) < 0)
			abort(); /* a valid snapshot whole: must not fail */
		now += (int64_t) byte(&r) * 7;
	}
	pol_actions_free(&out);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
	return 0;
}
