/*
 * sim_limits.c - information regimes: the time limits jobs ask for
 * (sim.h, doc/sim.md "Models").  Pure: the caller owns the RNG state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define REGIMES "trace, uniform:A:B, lognormal:SIGMA, constant:T, partmax[:T]"

int sim_duration_parse(const char *text, int64_t *out)
{
	static const struct {
		char unit;
		double s;
	} units[] = { { 's', 1 },
		      { 'm', 60 },
		      { 'h', 3600 },
		      { 'd', 86400 },
		      { 'w', 604800 } };
	char *end;
	double v, mult = 1;
	size_t i;

	if (!text || !*text)
		goto bad;
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || !isfinite(v) || v < 0)
		goto bad;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*end == units[i].unit)
				break;
		if (i == sizeof(units) / sizeof(units[0]) || end[1])
			goto bad;
		mult = units[i].s;
	}
	v = ceil(v * mult - 1e-9);
	if (v > 1e12)
		goto bad;
	*out = (int64_t) v;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

static int num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno || end == s || *end || !isfinite(*out)) ? -1 : 0;
}

int sim_limits_parse(const char *text, sim_limits_t *out, agora_err_t *err)
{
	char buf[128], *arg, *arg2;
	sim_limits_t l = { 0 };
	const char *why = NULL;

	if (!text ||
	    snprintf(buf, sizeof(buf), "%s", text) >= (int) sizeof(buf)) {
		why = "too long";
		goto bad;
	}
	arg = strchr(buf, ':');
	if (arg)
		*arg++ = '\0';
	if (!strcmp(buf, "trace")) {
		l.kind = SIM_LIMITS_TRACE;
		if (arg)
			why = "trace takes no argument";
	} else if (!strcmp(buf, "uniform")) {
		l.kind = SIM_LIMITS_UNIFORM;
		arg2 = arg ? strchr(arg, ':') : NULL;
		if (arg2)
			*arg2++ = '\0';
		if (!arg2 || num(arg, &l.a) || num(arg2, &l.b))
			why = "expected uniform:A:B with two numbers";
		else if (l.a < 1 || l.b < l.a || l.b > 1000)
			why = "needs 1 <= A <= B <= 1000";
	} else if (!strcmp(buf, "lognormal")) {
		l.kind = SIM_LIMITS_LOGNORMAL;
		if (!arg || num(arg, &l.a))
			why = "expected lognormal:SIGMA with a number";
		else if (l.a <= 0 || l.a > 10)
			why = "needs 0 < SIGMA <= 10";
	} else if (!strcmp(buf, "constant")) {
		l.kind = SIM_LIMITS_CONSTANT;
		if (!arg || sim_duration_parse(arg, &l.t))
			why = "expected constant:T with T a duration (604800, 7d, 1w)";
		else if (l.t < 1)
			why = "T must be at least 1 s";
	} else if (!strcmp(buf, "partmax")) {
		l.kind = SIM_LIMITS_PARTMAX;
		if (arg && sim_duration_parse(arg, &l.t))
			why = "expected partmax or partmax:T with T a duration";
		else if (arg && l.t < 1)
			why = "T must be at least 1 s";
	} else {
		why = "unknown regime (" REGIMES ")";
	}
	if (why)
		goto bad;
	*out = l;
	return 0;
bad:
	agora_err_set(err, "--limits: '%s': %s", text ? text : "", why);
	errno = EINVAL;
	return -1;
}

void sim_limits_format(const sim_limits_t *l, char *buf, size_t len)
{
	switch (l->kind) {
	case SIM_LIMITS_AUTO:
		snprintf(buf, len, "auto(trace,uniform:1:%g)", l->b);
		break;
	case SIM_LIMITS_TRACE:
		snprintf(buf, len, "trace");
		break;
	case SIM_LIMITS_UNIFORM:
		snprintf(buf, len, "uniform:%g:%g", l->a, l->b);
		break;
	case SIM_LIMITS_LOGNORMAL:
		snprintf(buf, len, "lognormal:%g", l->a);
		break;
	case SIM_LIMITS_CONSTANT:
		snprintf(buf, len, "constant:%lld", (long long) l->t);
		break;
	case SIM_LIMITS_PARTMAX:
		if (l->t)
			snprintf(buf, len, "partmax:%lld", (long long) l->t);
		else
			snprintf(buf, len, "partmax");
		break;
	}
}

static int64_t round_minute(double v)
{
	int64_t l = v > 4e15 ? (int64_t) 4e15 : (int64_t) ceil(v);

	l = ((l + 59) / 60) * 60;
	return l < 60 ? 60 : l;
}

int64_t sim_limits_partmax(const sim_limits_t *l, const sim_job_t *jobs, int n)
{
	int64_t m = 0;

	if (l->kind == SIM_LIMITS_PARTMAX && l->t > 0)
		return l->t;
	for (int i = 0; i < n; i++)
		if (jobs[i].duration > m)
			m = jobs[i].duration;
	return (m / 86400 + 1) * 86400;
}

int64_t sim_limit_draw(const sim_limits_t *l, const sim_job_t *j,
		       int64_t partmax, uint64_t *rng)
{
	double u, v;

	switch (l->kind) {
	case SIM_LIMITS_TRACE:
		return j->time_limit;
	case SIM_LIMITS_AUTO:
		if (j->time_limit > 0)
			return j->time_limit;
		/* uniform:1:b, one draw (the f-model) */
		__attribute__((fallthrough));
	case SIM_LIMITS_UNIFORM:
		u = sim_rand_unit(rng);
		return round_minute((double) j->duration *
				    (l->a + (l->b - l->a) * u));
	case SIM_LIMITS_LOGNORMAL:
		/* Box-Muller; |Z|: users over-state, never under-state */
		u = sim_rand_unit(rng);
		v = sim_rand_unit(rng);
		u = sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
		return round_minute((double) j->duration * exp(l->a * fabs(u)));
	case SIM_LIMITS_CONSTANT:
		return round_minute((double) l->t);
	case SIM_LIMITS_PARTMAX:
		return round_minute((double) partmax);
	}
	return round_minute((double) j->duration);
}
