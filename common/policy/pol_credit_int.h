/*
 * pol_credit_int.h - the ledger's representation, shared by pol_credit.c
 * (the arithmetic: charges, absorbed records, usage, credit, pruning) and
 * pol_credit_json.c (the state file: save and load as JSON).  Not part of
 * the API: include pol_credit.h instead.
 *
 * Accounts live in one array sorted by name (bsearch to find, memmove to
 * insert); sources (peer clusters) in a short unsorted array.
 */
#ifndef POL_CREDIT_INT_H
#define POL_CREDIT_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pol_credit.h"

typedef struct credit_acct {
	char name[POL_CREDIT_NAME_LEN];
	bool has_quota;
	double quota; /* GPU-hours per period */
	double raw;   /* decayed GPU-seconds at t_ref */
	int64_t t_ref;
	bool has_usage;
} credit_acct_t;

typedef struct credit_source {
	char cluster[POL_CREDIT_NAME_LEN];
	uint64_t hwm;
} credit_source_t;

struct pol_credit {
	char cluster[POL_CREDIT_NAME_LEN];
	uint64_t seq; /* last seq issued by this ledger */
	double half_life_s;
	double period_s;
	double default_quota;
	credit_acct_t *acct;
	size_t n_acct, cap_acct;
	credit_source_t *src;
	size_t n_src, cap_src;
};

static inline bool name_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	return n > 0 && n < POL_CREDIT_NAME_LEN;
}

static inline bool amount_ok(double gs)
{
	return gs >= 0 && isfinite(gs);
}

#endif
