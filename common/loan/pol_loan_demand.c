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

/* reading i's time from the first */
static double xat(const double *t, int i, double step)
{
	return t ? t[i] - t[0] : (double) i * step;
}

/* the line through (x_i, v_i), x_i = t[i] or i * step when t is NULL, at
 * ahead_s after the last reading (pol_loan.h) */
static double trend(const double *t, const double *v, int n, double step,
		    double ahead_s, double z)
{
	double mt = 0, mv = 0, sxy = 0, sxx = 0, ss = 0, slope, at, sd;
	int i;

	for (i = 0; i < n; i++) {
		mt += xat(t, i, step);
		mv += v[i];
	}
	mt /= n;
	mv /= n;
	for (i = 0; i < n; i++) {
		sxy += (xat(t, i, step) - mt) * (v[i] - mv);
		sxx += (xat(t, i, step) - mt) * (xat(t, i, step) - mt);
	}
	if (sxx <= 0) /* every reading at one time: no line */
		return v[n - 1];
	slope = sxy / sxx; /* per second */
	for (i = 0; i < n; i++) {
		double r = v[i] - (mv + slope * (xat(t, i, step) - mt));

		ss += r * r;
	}
	sd = sqrt(ss / (double) (n - 2));
	if (slope < 0)
		slope = 0;
	at = mv + slope * (xat(t, n - 1, step) - mt + ahead_s) +
	     (z > 0 ? z * sd : 0);
	return at > v[n - 1] ? at : v[n - 1];
}

double pol_loan_demand_ahead(const double *v, int n, double step_s,
			     double ahead_s, double z)
{
	if (!v || n <= 0)
		return 0;
	if (n < 3 || step_s <= 0 || ahead_s < 0)
		return v[n - 1];
	return trend(NULL, v, n, step_s, ahead_s, z);
}

double pol_loan_demand_ahead_at(const double *t, const double *v, int n,
				double ahead_s, double z)
{
	if (!t || !v || n <= 0)
		return 0;
	for (int i = 1; i < n; i++)
		if (t[i] < t[i - 1])
			return v[n - 1];
	if (n < 3 || ahead_s < 0)
		return v[n - 1];
	return trend(t, v, n, 1, ahead_s, z);
}
