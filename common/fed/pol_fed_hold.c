/*
 * pol_fed_hold.c - the federation hold's marks and its state machine
 * (pol_fed_hold.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_fed_hold.h"

#define FOREIGN_TEXT                                                           \
	"held by its owner or an admin (scontrol hold), not by Agora: "        \
	"scontrol release hands it to Slurm's own federation"

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* "123" at *p (digits only, at most 18): the value, *p past it; -1 if
 * none. */
static int64_t read_num(const char **p)
{
	int64_t v = 0;
	int n = 0;

	while (**p >= '0' && **p <= '9' && n < 18) {
		v = v * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n ? v : -1;
}

static bool read_word(const char **p, const char *word)
{
	if (!starts_with(*p, word))
		return false;
	*p += strlen(word);
	return true;
}

/* v1's body after "Agora: fed hold v1: " */
static void parse_v1(const char *p, pol_fed_mark_t *m)
{
	int64_t t;

	if (read_word(&p, "waiting since ")) {
		if ((t = read_num(&p)) < 0)
			return;
		m->kind = POL_FED_MARK_WAITING;
		m->since = t;
		return;
	}
	if (read_word(&p, "pinned to ")) {
		size_t n = strcspn(p, " ,;");

		if (!n || n >= sizeof(m->cluster))
			return;
		memcpy(m->cluster, p, n);
		m->cluster[n] = '\0';
		p += n;
		if (!read_word(&p, " at ") || (m->at = read_num(&p)) < 0 ||
		    !read_word(&p, ", held since ") ||
		    (m->since = read_num(&p)) < 0) {
			m->cluster[0] = '\0';
			m->at = m->since = 0;
			return;
		}
		m->kind = POL_FED_MARK_PINNED;
		m->decision = read_word(&p, "; ") ? p : "";
		return;
	}
	if (read_word(&p, "held by "))
		m->kind = POL_FED_MARK_FOREIGN;
}

/* The stamp of a WON text: "; pinned at P, start by S, clusters L" at
 * its end, and the winner after "won by ". */
static void parse_won(const char *text, pol_fed_mark_t *m)
{
	const char *p = text + strlen(POL_FED_TEXT_WON), *q, *s = NULL;
	int64_t at, by;
	size_t n;

	if (read_word(&p, "won by ")) {
		n = strcspn(p, " ,;(");
		if (n && n < sizeof(m->cluster)) {
			memcpy(m->cluster, p, n);
			m->cluster[n] = '\0';
		}
	}
	for (q = text; (q = strstr(q, POL_FED_TEXT_STAMP)); q++)
		s = q; /* the last one */
	if (!s)
		return;
	p = s + strlen(POL_FED_TEXT_STAMP);
	if ((at = read_num(&p)) < 0 || !read_word(&p, ", start by ") ||
	    (by = read_num(&p)) < 0 || !read_word(&p, ", clusters "))
		return;
	n = strlen(p);
	if (!n || n >= sizeof(m->clusters) || strcspn(p, " ;") != n)
		return;
	m->at = at;
	m->start_by = by;
	if (strcmp(p, "*"))
		memcpy(m->clusters, p, n + 1);
}

void pol_fed_mark_parse(const char *text, pol_fed_mark_t *m)
{
	const char *p;

	memset(m, 0, sizeof(*m));
	m->decision = "";
	if (!text)
		return;
	if (starts_with(text, POL_FED_TEXT_WON)) {
		m->kind = POL_FED_MARK_WON;
		m->version = POL_FED_TEXT_VERSION;
		parse_won(text, m);
		return;
	}
	if (starts_with(text, POL_FED_TEXT_OPEN)) {
		m->kind = POL_FED_MARK_OPEN;
		m->version = POL_FED_TEXT_VERSION;
		return;
	}
	if (starts_with(text, POL_FED_TEXT_HOLD_V0)) {
		m->kind = POL_FED_MARK_WAITING; /* since: the submit time */
		return;
	}
	if (!starts_with(text, POL_FED_TEXT_HOLD_VN))
		return;
	/* "Agora: fed hold vN: ": Agora's, whatever N says */
	m->kind = POL_FED_MARK_UNKNOWN;
	p = text + strlen(POL_FED_TEXT_HOLD_VN);
	m->version = (int) read_num(&p);
	if (m->version != POL_FED_TEXT_VERSION || !read_word(&p, ": "))
		return;
	parse_v1(p, m);
}

char *pol_fed_mark_waiting(int64_t since, int timeout_s)
{
	char buf[256];
	char *t;

	snprintf(
		buf, sizeof(buf),
		"%swaiting since %" PRId64
		" for agorad's cross-cluster auction (released to stock Slurm after %d s)",
		POL_FED_TEXT_HOLD_V1, since < 0 ? (int64_t) 0 : since,
		timeout_s);
	if (!(t = strdup(buf)))
		errno = ENOMEM;
	return t;
}

char *pol_fed_mark_pinned(const char *cluster, int64_t at, int64_t since,
			  const char *decision)
{
	size_t n, cap;
	char *t;

	if (!cluster || !(n = strlen(cluster)) ||
	    n >= POL_FED_MARK_CLUSTER_LEN || strcspn(cluster, " ,;") != n) {
		errno = EINVAL;
		return NULL;
	}
	cap = strlen(POL_FED_TEXT_HOLD_V1) + n + 96 +
	      (decision ? strlen(decision) : 0);
	if (!(t = malloc(cap))) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(t, cap,
		 "%spinned to %s at %" PRId64 ", held since %" PRId64 "%s%s",
		 POL_FED_TEXT_HOLD_V1, cluster, at < 0 ? (int64_t) 0 : at,
		 since < 0 ? (int64_t) 0 : since,
		 decision && *decision ? "; " : "", decision ? decision : "");
	return t;
}

char *pol_fed_mark_stamp(const char *decision, int64_t at, int64_t start_by,
			 const char *clusters)
{
	size_t n = clusters ? strlen(clusters) : 0, cap;
	char *t;

	if (n >= POL_FED_MARK_CLUSTERS_LEN ||
	    strcspn(clusters ? clusters : "", " ;") != n) {
		errno = EINVAL;
		return NULL;
	}
	cap = (decision ? strlen(decision) : 0) + n + 96;
	if (!(t = malloc(cap))) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(t, cap,
		 "%s" POL_FED_TEXT_STAMP "%" PRId64 ", start by %" PRId64
		 ", clusters %s",
		 decision ? decision : "", at < 0 ? (int64_t) 0 : at,
		 start_by < 0 ? (int64_t) 0 : start_by, n ? clusters : "*");
	return t;
}

char *pol_fed_mark_foreign(const char *before)
{
	size_t cap = strlen(POL_FED_TEXT_HOLD_V1) + strlen(FOREIGN_TEXT) + 16 +
		     (before ? strlen(before) : 0);
	char *t = malloc(cap);

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(t, cap, "%s%s%s%s", POL_FED_TEXT_HOLD_V1, FOREIGN_TEXT,
		 before && *before ? "; before: " : "", before ? before : "");
	return t;
}

pol_fed_hold_act_t pol_fed_hold_next(const pol_fed_hold_obs_t *o,
				     const pol_fed_mark_t *m)
{
	switch (m->kind) {
	case POL_FED_MARK_WAITING:
		/* a user's "scontrol release" of Agora's hold hands the job
		 * to stock Slurm: not ours any more */
		return o->pending && o->held ? POL_FED_HOLD_AUCTION
					     : POL_FED_HOLD_NONE;
	case POL_FED_MARK_PINNED:
		if (o->pending && o->held)
			return POL_FED_HOLD_RELEASE;
		/* released (by agorad or the fail-open): the decision text
		 * is all that is left, while the job is there to take it */
		return o->active ? POL_FED_HOLD_FINISH : POL_FED_HOLD_NONE;
	default:
		/* FOREIGN: someone else's hold; WON/OPEN: done; UNKNOWN: a
		 * newer agorad's, left to it and to the fail-open */
		return POL_FED_HOLD_NONE;
	}
}

int64_t pol_fed_pin_due(const pol_fed_hold_obs_t *o, const pol_fed_mark_t *m,
			const char *me, int timeout_s)
{
	int64_t from;

	if (timeout_s <= 0 || m->kind != POL_FED_MARK_WON || m->at <= 0 ||
	    !o->pending || o->held || !me || strcmp(m->cluster, me))
		return 0;
	from = m->start_by > m->at ? m->start_by : m->at;
	return from + timeout_s;
}

pol_fed_hold_act_t pol_fed_pin_next(const pol_fed_hold_obs_t *o,
				    const pol_fed_mark_t *m, const char *me,
				    int timeout_s, int64_t now)
{
	int64_t due = pol_fed_pin_due(o, m, me, timeout_s);

	return due > 0 && now >= due ? POL_FED_HOLD_REAUCTION
				     : POL_FED_HOLD_NONE;
}

bool pol_fed_reauction_confirm(const pol_fed_mark_t *at_origin,
			       const char *stale_winner, int64_t stamp_at)
{
	return at_origin->kind == POL_FED_MARK_WON && at_origin->at > 0 &&
	       at_origin->at == stamp_at && stale_winner &&
	       !strcmp(at_origin->cluster, stale_winner);
}

int pol_fed_hold_steps(pol_fed_hold_act_t act, pol_fed_step_t steps[3])
{
	int n = 0;

	switch (act) {
	case POL_FED_HOLD_REAUCTION:
		steps[n++] = POL_FED_STEP_PIN;
		steps[n++] = POL_FED_STEP_FINISH;
		break;
	case POL_FED_HOLD_AUCTION:
		steps[n++] = POL_FED_STEP_PIN;
		/* fall through */
	case POL_FED_HOLD_RELEASE:
		/* the release writes the decision too (pol_fed_hold.h) */
		steps[n++] = POL_FED_STEP_RELEASE;
		break;
	case POL_FED_HOLD_FINISH:
		steps[n++] = POL_FED_STEP_FINISH;
		break;
	default:
		break;
	}
	return n;
}

bool pol_fed_hold_expired(const pol_fed_hold_obs_t *o, const pol_fed_mark_t *m,
			  bool auction_on, int timeout_s, int64_t now,
			  long *waited)
{
	int64_t since;

	if (waited)
		*waited = 0;
	if (!o->pending || !o->held)
		return false;
	switch (m->kind) {
	case POL_FED_MARK_WAITING:
	case POL_FED_MARK_PINNED:
	case POL_FED_MARK_UNKNOWN:
	case POL_FED_MARK_WON: /* still held after the decision: a release
				  that never landed, unless the job has run
				  since and was held again, by Slurm or an
				  admin (requeuehold, a launch failure) */
		if (o->ran)
			return false;
		break;
	default:
		return false;
	}
	since = m->since > 0 ? m->since : o->submit;
	if (waited)
		*waited = (long) (now > since ? now - since : 0);
	return !auction_on || now - since >= timeout_s;
}

bool pol_fed_hold_update_is_foreign(const pol_fed_mark_t *m,
				    bool update_sets_hold,
				    const char *new_admin_comment)
{
	pol_fed_mark_t nm;

	if (!update_sets_hold)
		return false;
	if (m->kind == POL_FED_MARK_NONE || m->kind == POL_FED_MARK_FOREIGN)
		return false;
	pol_fed_mark_parse(new_admin_comment, &nm);
	/* Agora's own hold (a re-auction) comes with its mark */
	return nm.kind != POL_FED_MARK_WAITING &&
	       nm.kind != POL_FED_MARK_PINNED;
}
