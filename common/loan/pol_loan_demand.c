/*
 * pol_loan_demand.c - the diurnal inference demand model (pol_loan.h,
 * doc/loaning.md): a raised cosine between the trough and the peak with
 * seeded multiplicative noise, a pure function of time.
 */
#include <math.h>
#include <stdint.h>

#include "pol_loan.h"

void pol_loan_demand_default(pol_loan_demand_t *d, int nodes)
{
	d->nodes = nodes;
	d->peak = 0.85 * nodes;
	d->ratio = 3.0;
	d->noise = 0.05;
	d->peak_hour = 14.0;
	d->seed = 1;
}

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* a standard normal from two hashed uniforms (Box-Muller) */
static double normal(uint64_t seed, int64_t minute)
{
	uint64_t a = mix(seed * 0x100000001b3ULL ^ (uint64_t) minute);
	uint64_t b = mix(a);
	double u1 = ((double) (a >> 11) + 1.0) / 9007199254740993.0;
	double u2 = (double) (b >> 11) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double pol_loan_demand_at(const pol_loan_demand_t *d, int64_t t)
{
	double r, day, phase, base, v;
	int64_t minute;

	if (!d || d->nodes <= 0)
		return 0;
	r = d->ratio >= 1 ? 1.0 / d->ratio : 1.0;
	day = 86400.0;
	phase = ((double) t - d->peak_hour * 3600.0) / day;
	base = d->peak * (r + (1.0 - r) * (1.0 + cos(2.0 * M_PI * phase)) / 2);
	minute = t >= 0 ? t / 60 : (t - 59) / 60;
	v = base * (1.0 + d->noise * normal(d->seed, minute));
	if (v < 0)
		v = 0;
	if (v > d->nodes)
		v = d->nodes;
	return v;
}

double pol_loan_demand_ahead(const double *v, int n, double step_s,
			     double ahead_s, double z)
{
	double mt = 0, mv = 0, sxy = 0, sxx = 0, ss = 0, slope, at, sd;
	int i;

	if (!v || n <= 0)
		return 0;
	if (n < 3 || step_s <= 0 || ahead_s < 0)
		return v[n - 1];
	for (i = 0; i < n; i++) {
		mt += (double) i;
		mv += v[i];
	}
	mt /= n;
	mv /= n;
	for (i = 0; i < n; i++) {
		sxy += ((double) i - mt) * (v[i] - mv);
		sxx += ((double) i - mt) * ((double) i - mt);
	}
	slope = sxy / sxx; /* per reading */
	for (i = 0; i < n; i++) {
		double r = v[i] - (mv + slope * ((double) i - mt));

		ss += r * r;
	}
	sd = sqrt(ss / (double) (n - 2));
	if (slope < 0)
		slope = 0;
	at = mv + slope * ((double) (n - 1) - mt + ahead_s / step_s) +
	     (z > 0 ? z * sd : 0);
	return at > v[n - 1] ? at : v[n - 1];
}
