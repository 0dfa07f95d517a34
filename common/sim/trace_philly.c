/*
 * trace_philly.c - the Philly trace as preprocessed by Pollux (trace.h).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant) */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* days in month m (1-12) of year y, proleptic Gregorian */
static int month_days(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30,
				      31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

static int parse_ts(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, se, n = 0;

	/* a day the month does not have ("2017-02-31") is refused, not
	 * rolled over into the next month */
	if (sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se,
		   &n) != 6 ||
	    s[n] || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) ||
	    h > 23 || mi > 59 || se > 60 || h < 0 || mi < 0 || se < 0)
		return -1;
	*out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	return 0;
}

static int parse_dbl(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno || end == s || *end || !isfinite(*out)) ? -1 : 0;
}

int trace_parse_philly(const char *text, const char *name,
		       trace_filter_t filter, trace_t *out, agora_err_t *err)
{
	trace_line_t tl = { .p = text };
	trace_t t = { 0 };
	int rc, row = 0;

#define BAD(col, ...)                                                          \
	do {                                                                   \
		char why_[256];                                                \
		snprintf(why_, sizeof(why_), __VA_ARGS__);                     \
		agora_err_set(err, "%s:%d: %s: %s", name, tl.line, col, why_); \
		errno = EINVAL;                                                \
		goto fail;                                                     \
	} while (0)

	rc = trace_next_line(&tl);
	if (rc != 1 ||
	    strcmp(tl.buf, "timestamp,duration,num_gpus,gpu_time,cluster"))
		BAD("header",
		    "expected 'timestamp,duration,num_gpus,gpu_time,cluster'");
	while ((rc = trace_next_line(&tl)) == 1) {
		char *f[6];
		double dur, gt, g;
		sim_job_t j;
		int n = trace_split(tl.buf, f, 6);

		row++;
		if (n != 5)
			BAD("row", "%d fields, expected 5", n);
		memset(&j, 0, sizeof(j));
		j.id = row;
		j.dataset = -1;
		if (parse_ts(f[0], &j.submit))
			BAD("timestamp", "'%s' is not YYYY-MM-DD HH:MM:SS",
			    f[0]);
		if (parse_dbl(f[1], &dur) || dur < 0 || dur > 1e9)
			BAD("duration", "'%s' is not a duration in seconds",
			    f[1]);
		if (parse_dbl(f[2], &g) || g < 1 || g > 100000 || g != floor(g))
			BAD("num_gpus", "'%s' is not a positive integer", f[2]);
		if (parse_dbl(f[3], &gt) || gt < 0)
			BAD("gpu_time", "'%s' is not a number", f[3]);
		if (!*f[4])
			BAD("cluster", "empty tenant");
		if (filter == TRACE_FILTER_POLLUX &&
		    (dur < 60 || gt >= 1000.0 * 3600)) {
			t.filtered++;
			continue;
		}
		j.duration = (int64_t) llround(dur);
		if (j.duration < 1)
			j.duration = 1;
		j.gpus = (int) g;
		if (strlen(f[4]) >= POL_NAME_LEN)
			BAD("cluster", "longer than %d characters",
			    POL_NAME_LEN - 1);
		j.tenant = trace_tenant(&t, f[4]);
		if (j.tenant < 0 || trace_add_job(&t, &j))
			goto nomem;
	}
	if (rc < 0)
		BAD("row", "line longer than %zu bytes", sizeof(tl.buf) - 1);
#undef BAD
	t.format = "philly";
	*out = t;
	return 0;
nomem:
	agora_err_set(err, "%s: out of memory", name);
	errno = ENOMEM;
fail:
	trace_free(&t);
	return -1;
}
