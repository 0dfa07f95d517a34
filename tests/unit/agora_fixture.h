/*
 * Fixtures shared by the unit tests of the agora policy (test_agora.c,
 * test_agora_input.c, test_agora_ckpt.c): a pending GPU job, a job placed
 * on one node's GPUs, and the lookup of an action.  Include after cmocka.h
 * and pol_policy.h.
 */
#ifndef AGORA_TEST_FIXTURE_H
#define AGORA_TEST_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "pol_policy.h"

/* A pending, requeueable job of GPUS GPUs with a time limit of LIMIT s. */
static inline pol_job_t fx_job(int64_t id, int tenant, int gpus, int64_t submit,
			       int64_t limit)
{
	pol_job_t j;

	memset(&j, 0, sizeof(j));
	j.id = id;
	j.tenant = tenant;
	j.total_gpus = j.min_gpus = j.max_gpus = gpus;
	j.submit = submit;
	j.time_limit = limit;
	j.dataset = -1;
	j.requeueable = true;
	j.state = POL_JOB_PENDING;
	j.remaining = -1;
	return j;
}

/* Make j run on node n, GPUs mask, since start; marks them busy. */
static inline void fx_run_at(pol_cluster_t *c, pol_job_t *j,
			     pol_alloc_part_t *part, int n, pol_gpumask_t mask,
			     int64_t start)
{
	part->node = n;
	part->gpus = mask;
	j->alloc.parts = part;
	j->alloc.n_parts = 1;
	j->state = POL_JOB_RUNNING;
	j->start = start;
	c->nodes[n].free &= ~mask;
}

/* The action of TYPE for job ID in A, or NULL. */
static inline const pol_action_t *fx_find(const pol_actions_t *a,
					  pol_action_type_t type, int64_t id)
{
	int i;

	for (i = 0; i < a->n; i++)
		if (a->v[i].type == type && a->v[i].job_id == id)
			return &a->v[i];
	return NULL;
}

#endif
