/*
 * pol_loan_lease.c - loan and elastic marks, the lease expiry and the grow
 * follow rule (pol_loan_lease.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol_loan_lease.h"

/* ---- time text -------------------------------------------------------- */

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
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

char *pol_time_utc(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t) t;
	struct tm tm;

	if (!buf || !size)
		return buf;
	if (!gmtime_r(&tt, &tm) ||
	    !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "?");
	return buf;
}

int pol_time_utc_parse(const char *s, int64_t *t, const char **end)
{
	int y, mo, d, h, mi, se, n = 0;

	if (!s || !t ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &se,
		   &n) != 6 ||
	    n != 20 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
	    mi > 59 || se > 60 || h < 0 || mi < 0 || se < 0) {
		errno = EINVAL;
		return -1;
	}
	*t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	if (end)
		*end = s + n;
	return 0;
}

/* ---- loan marks ----------------------------------------------------- */

static bool starts(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

/* The v1 body after "Agora loan v1: ". */
static int parse_v1(const char *p, pol_loan_lease_mark_t *m)
{
	const char *e;

	if (starts(p, "lent since ")) {
		m->state = POL_LOAN_LEASE_LENT;
		if (pol_time_utc_parse(p + 11, &m->since, &e) ||
		    !starts(e, ", heartbeat ") ||
		    pol_time_utc_parse(e + 12, &m->heartbeat, NULL))
			return -1;
		return 0;
	}
	if (starts(p, "returned ")) {
		m->state = POL_LOAN_LEASE_RETURNED;
		if (pol_time_utc_parse(p + 9, &m->returned, &e))
			return -1;
		if (starts(e, ", lent since "))
			(void) pol_time_utc_parse(e + 13, &m->since, NULL);
		return 0;
	}
	return -1;
}

int pol_loan_lease_mark_parse(const char *comment, pol_loan_lease_mark_t *m)
{
	const char *p;
	long long since;

	if (!m || !starts(comment, POL_LOAN_LEASE_PREFIX)) {
		errno = m ? ENOENT : EINVAL;
		return -1;
	}
	memset(m, 0, sizeof(*m));
	p = comment + strlen(POL_LOAN_LEASE_PREFIX);
	if (starts(p, " v1: ")) {
		m->version = 1;
		if (parse_v1(p + 5, m)) {
			/* ours but unreadable: expired (fail safe) */
			memset(m, 0, sizeof(*m));
			m->version = 1;
			m->state = POL_LOAN_LEASE_LENT;
		}
		return 0;
	}
	/* the legacy form, "Agora loan: lent since EPOCH": no heartbeat */
	m->version = 0;
	m->state = POL_LOAN_LEASE_LENT;
	if (sscanf(p, ": lent since %lld", &since) == 1 && since > 0)
		m->since = m->heartbeat = since;
	return 0;
}

int pol_loan_lease_mark_format(const pol_loan_lease_mark_t *m, char *buf,
			       size_t size)
{
	char t1[32], t2[32];
	int n;

	if (!m || !buf ||
	    (m->state != POL_LOAN_LEASE_LENT &&
	     m->state != POL_LOAN_LEASE_RETURNED)) {
		errno = EINVAL;
		return -1;
	}
	if (m->state == POL_LOAN_LEASE_LENT)
		n = snprintf(buf, size,
			     POL_LOAN_LEASE_PREFIX
			     " v1: lent since %s, heartbeat %s",
			     pol_time_utc(m->since, t1, sizeof(t1)),
			     pol_time_utc(m->heartbeat, t2, sizeof(t2)));
	else if (m->since > 0)
		n = snprintf(buf, size,
			     POL_LOAN_LEASE_PREFIX
			     " v1: returned %s, lent since %s",
			     pol_time_utc(m->returned, t1, sizeof(t1)),
			     pol_time_utc(m->since, t2, sizeof(t2)));
	else
		n = snprintf(buf, size,
			     POL_LOAN_LEASE_PREFIX " v1: returned %s",
			     pol_time_utc(m->returned, t1, sizeof(t1)));
	if (n < 0 || (size_t) n >= size) {
		errno = ERANGE;
		return -1;
	}
	return 0;
}

bool pol_loan_lease_comment_free(const char *comment)
{
	return !comment || !*comment || starts(comment, "Agora");
}

bool pol_loan_lease_expired(const pol_loan_lease_mark_t *m, int64_t now,
			    int64_t timeout_s)
{
	if (m->state == POL_LOAN_LEASE_RETURNED)
		return true;
	return timeout_s > 0 && now - m->heartbeat > timeout_s;
}

bool pol_loan_lease_renew_due(const pol_loan_lease_mark_t *m, bool marked,
			      int64_t now, int64_t timeout_s)
{
	if (!marked || m->version != POL_LOAN_LEASE_VERSION ||
	    m->state != POL_LOAN_LEASE_LENT || m->heartbeat <= 0)
		return true;
	if (timeout_s <= 0)
		return false;
	return now - m->heartbeat >= (timeout_s / 4 > 1 ? timeout_s / 4 : 1);
}

/* ---- lease expiry --------------------------------------------------- */

int pol_loan_lease_expire(const pol_loan_lease_in_t *in,
			  pol_loan_lease_out_t *out)
{
	int i, j, k;

	if (!in || !out || !out->node_action || (in->n_jobs && !out->requeue) ||
	    in->n_nodes < 0 || in->n_jobs < 0 || (in->n_nodes && !in->nodes) ||
	    (in->n_jobs && !in->jobs)) {
		errno = EINVAL;
		return -1;
	}
	for (j = 0; j < in->n_jobs; j++)
		for (k = 0; k < in->jobs[j].n_nodes; k++)
			if (in->jobs[j].nodes[k] < 0 ||
			    in->jobs[j].nodes[k] >= in->n_nodes) {
				errno = EINVAL;
				return -1;
			}
	out->n_return = out->n_clear = out->n_requeue = 0;
	for (j = 0; j < in->n_jobs; j++)
		out->requeue[j] = 0;
	for (i = 0; i < in->n_nodes; i++) {
		const pol_loan_lease_node_t *n = &in->nodes[i];
		bool borrowed = false;

		out->node_action[i] = POL_LOAN_LEASE_KEEP;
		if (!n->marked ||
		    !pol_loan_lease_expired(&n->mark, in->now, in->timeout_s))
			continue;
		for (j = 0; j < in->n_jobs && !borrowed; j++)
			for (k = 0; k < in->jobs[j].n_nodes; k++)
				if (in->jobs[j].nodes[k] == i)
					borrowed = true;
		if (n->mark.state == POL_LOAN_LEASE_LENT || n->in_train)
			out->node_action[i] = POL_LOAN_LEASE_RETURN;
		else if (!borrowed)
			out->node_action[i] = POL_LOAN_LEASE_CLEAR;
		for (j = 0; j < in->n_jobs; j++) {
			const pol_loan_lease_job_t *pj = &in->jobs[j];

			if (out->requeue[j] || !pj->requeue || pj->done)
				continue;
			for (k = 0; k < pj->n_nodes; k++)
				if (pj->nodes[k] == i) {
					out->requeue[j] = 1;
					out->n_requeue++;
					break;
				}
		}
		out->n_return += out->node_action[i] == POL_LOAN_LEASE_RETURN;
		out->n_clear += out->node_action[i] == POL_LOAN_LEASE_CLEAR;
	}
	return 0;
}

/* ---- the demand, safely --------------------------------------------- */

double pol_loan_demand_safe(double d, double *last, int64_t *last_t,
			    int64_t now, int64_t grace_s)
{
	if (d >= 0) {
		*last = d;
		*last_t = now;
		return d;
	}
	if (*last >= 0 && *last_t > 0 && now - *last_t <= grace_s)
		return *last;
	return -1;
}

double pol_loan_demand_jobs(const pol_loan_demand_job_t *jobs, int n,
			    int n_nodes)
{
	double sum = 0;

	for (int i = 0; i < n; i++) {
		int k = jobs[i].nodes > 0 ? jobs[i].nodes : 1;

		if (!jobs[i].running && !jobs[i].ready)
			continue;
		sum += k < n_nodes ? k : n_nodes;
	}
	return sum < n_nodes ? sum : n_nodes;
}

/* ---- elastic marks -------------------------------------------------- */

int pol_elastic_mark_parse(const char *text, pol_elastic_mark_t *m)
{
	const char *p, *e;
	int n = 0;

	if (!m || !starts(text, POL_ELASTIC_PREFIX)) {
		errno = m ? ENOENT : EINVAL;
		return -1;
	}
	memset(m, 0, sizeof(*m));
	p = text + strlen(POL_ELASTIC_PREFIX);
	if (sscanf(p, " v1: range %d-%d%n", &m->min, &m->max, &n) != 2 ||
	    m->min < 1 || m->max < m->min)
		goto bad;
	p += n;
	if (!*p)
		return 0;
	if (sscanf(p, "; grow %d->%d at %n", &m->from, &m->to, &n) != 2 ||
	    m->from < 1 || m->to <= m->from ||
	    pol_time_utc_parse(p + n, &m->time, &e))
		goto bad;
	m->grown = true;
	if (!*e)
		return 0;
	if (sscanf(e, ", restarted on %d%n", &m->started, &n) != 1 ||
	    m->started < 1 || e[n])
		goto bad;
	return 0;
bad:
	memset(m, 0, sizeof(*m));
	errno = EINVAL;
	return -1;
}

int pol_elastic_mark_format(const pol_elastic_mark_t *m, char *buf, size_t size)
{
	char t[32];
	int n;

	if (!m || !buf || m->min < 1 || m->max < m->min ||
	    (m->grown && (m->from < 1 || m->to <= m->from))) {
		errno = EINVAL;
		return -1;
	}
	if (!m->grown)
		n = snprintf(buf, size, POL_ELASTIC_PREFIX " v1: range %d-%d",
			     m->min, m->max);
	else if (!m->started)
		n = snprintf(buf, size,
			     POL_ELASTIC_PREFIX
			     " v1: range %d-%d; grow %d->%d at %s",
			     m->min, m->max, m->from, m->to,
			     pol_time_utc(m->time, t, sizeof(t)));
	else
		n = snprintf(
			buf, size,
			POL_ELASTIC_PREFIX
			" v1: range %d-%d; grow %d->%d at %s, restarted on %d",
			m->min, m->max, m->from, m->to,
			pol_time_utc(m->time, t, sizeof(t)), m->started);
	if (n < 0 || (size_t) n >= size) {
		errno = ERANGE;
		return -1;
	}
	return 0;
}

/* ---- the grow follow rule ------------------------------------------- */

pol_grow_action_t pol_grow_follow(const pol_elastic_mark_t *m,
				  const pol_grow_obs_t *o, int64_t now,
				  int64_t give_up_s)
{
	if (!m || !o || !m->grown)
		return POL_GROW_NONE;
	if (o->running)
		return m->started ? POL_GROW_NONE : POL_GROW_RESTARTED;
	if (!o->pending)
		return POL_GROW_NONE;
	if (m->started)
		return POL_GROW_RESTORE;
	if (now - m->time > give_up_s)
		return POL_GROW_RESTORE;
	if (o->num_nodes != m->to || o->max_nodes != m->to)
		return POL_GROW_SET_SIZE;
	return POL_GROW_NONE;
}
