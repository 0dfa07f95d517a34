/*
 * agora_conf.c - parser for agora.conf (see agora_conf.h).
 *
 * Table driven: each key has a type, a range and a setter; adding a key is
 * adding a row.  The parser works on a private copy and only swaps it into
 * the caller's struct when the whole file parsed.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "agora_file.h"
#include "agora_argv.h"
#include "agora_conf.h"
#include "agora_num.h"
#include "pol_app.h"
#include "pol_apps.h"

typedef enum conf_type {
	CT_INT,
	CT_DURATION,
	CT_DOUBLE,
	CT_BOOL,
	CT_APPDEF,
	CT_CHAR,
	CT_STRING,
	CT_LIST,
	CT_QUOTA,
	CT_PLACEMENT,
	CT_DEMAND,
	CT_CKPT,
} conf_type_t;

typedef struct conf_key {
	const char *name;
	conf_type_t type;
	size_t offset;
	double min, max; /* inclusive range for numbers */
	bool repeatable; /* may appear more than once (appends) */
} conf_key_t;

#define OFF(f) offsetof(agora_conf_t, f)

static const conf_key_t conf_keys[] = {
	{ "SchedulerInterval", CT_DURATION, OFF(sched_interval_s), 1, 3600,
	  false },
	{ "EmbedBackfill", CT_BOOL, OFF(embed_backfill), 0, 0, false },
	{ "AuctionPartitions", CT_LIST, OFF(auction_partitions), 0, 0, false },
	{ "AppDefinition", CT_APPDEF, OFF(app_def), 0, 0, false },
	{ "AppNameSeparator", CT_CHAR, OFF(app_separator), 0, 0, false },
	{ "AppGap", CT_DURATION, OFF(app_gap_s), 0, POL_APPS_MAX_GAP, false },
	{ "AppsPerAccount", CT_INT, OFF(apps_per_account), 1,
	  POL_APPS_MAX_PER_ACCOUNT, false },
	{ "FairnessKnob", CT_DOUBLE, OFF(fairness_knob), 0.0, 0.99, false },
	{ "LeaseTime", CT_DURATION, OFF(lease_s), 10, 7 * 86400, false },
	{ "GraceTime", CT_DURATION, OFF(grace_s), 0, 86400, false },
	{ "CheckpointInterval", CT_CKPT, OFF(ckpts), 60, 30 * 86400, true },
	{ "PreemptBudget", CT_INT, OFF(preempt_budget), 0, 1000000, false },
	{ "PreemptEvery", CT_DURATION, OFF(preempt_every_s), 0, 30 * 86400,
	  false },
	{ "PreemptUnsaved", CT_BOOL, OFF(preempt_unsaved), 0, 0, false },
	{ "ReserveForWorstApp", CT_BOOL, OFF(reserve_worst_app), 0, 0, false },
	{ "CreditHalfLife", CT_DOUBLE, OFF(credit_half_life_h), 0.01, 1e6,
	  false },
	{ "CreditPeriod", CT_DOUBLE, OFF(credit_period_h), 0.01, 1e6, false },
	{ "DefaultQuota", CT_DOUBLE, OFF(default_quota), 0, 1e12, false },
	{ "AccountQuota", CT_QUOTA, OFF(quotas), 0, 1e12, true },
	/* at most a tenth of the award boost (10^9, agora_sched.h): the credit
	 * term may never look like, or outrank, an award */
	{ "CreditWeight", CT_INT, OFF(credit_weight), 0, 1e8, false },
	{ "TopologyModel", CT_STRING, OFF(topology_model), 0, 0, false },
	{ "Placement", CT_PLACEMENT, OFF(placement), 0, 0, false },
	{ "FedAuction", CT_BOOL, OFF(fed_auction), 0, 0, false },
	{ "FedAuctionTimeout", CT_DURATION, OFF(fed_auction_timeout_s), 5,
	  86400, false },
	{ "FedPinStartTimeout", CT_DURATION, OFF(fed_pin_start_timeout_s), 0,
	  86400, false },
	{ "FedAuctionInterval", CT_DURATION, OFF(fed_interval_s), 1, 600,
	  false },
	{ "FedSurveyMaxAge", CT_DURATION, OFF(fed_survey_max_age_s), 0, 60,
	  false },
	{ "FedCatalog", CT_STRING, OFF(fed_catalog), 0, 0, false },
	{ "Loaning", CT_BOOL, OFF(loaning), 0, 0, false },
	{ "LoanInferencePartitions", CT_LIST, OFF(loan_infer_partitions), 0, 0,
	  false },
	{ "LoanTrainPartitions", CT_LIST, OFF(loan_train_partitions), 0, 0,
	  false },
	{ "LoanHeadroomNodes", CT_INT, OFF(loan_headroom), 0, 100000, false },
	{ "LoanInterval", CT_DURATION, OFF(loan_interval_s), 1, 600, false },
	{ "LoanLendHold", CT_DURATION, OFF(loan_lend_hold_s), 0, 86400, false },
	{ "ReclaimDeadline", CT_DURATION, OFF(reclaim_deadline_s), 5, 86400,
	  false },
	{ "ReclaimGrace", CT_DURATION, OFF(reclaim_grace_s), 0, 86400, false },
	{ "MaxRequeuesPerJob", CT_INT, OFF(max_requeues), 0, 1000000, false },
	{ "LoanLeaseTimeout", CT_DURATION, OFF(loan_lease_timeout_s), 0,
	  7 * 86400, false },
	{ "LoanDemandGrace", CT_DURATION, OFF(loan_demand_grace_s), 0, 3600,
	  false },
	{ "LoanCheckpointInterval", CT_DURATION, OFF(loan_ckpt_s), 0,
	  30 * 86400, false },
	{ "LoanRestartOverhead", CT_DURATION, OFF(loan_restart_s), 0, 86400,
	  false },
	{ "LoanCheckpointWait", CT_DURATION, OFF(loan_ckpt_wait_s), 0,
	  30 * 86400, false },
	{ "LoanReclaimAhead", CT_DURATION, OFF(loan_ahead_s), 0, 86400, false },
	{ "LoanReclaimAheadSigma", CT_DOUBLE, OFF(loan_ahead_z), 0.0, 10.0,
	  false },
	{ "LoanDemandSource", CT_DEMAND, OFF(loan_demand_kind), 0, 0, false },
	{ "LoanElasticGrow", CT_BOOL, OFF(loan_grow), 0, 0, false },
	{ "LoanGrowMinGain", CT_DURATION, OFF(loan_grow_min_gain_s), 0,
	  30 * 86400, false },
	{ "LoanScalingSerial", CT_DOUBLE, OFF(loan_serial), 0.0, 0.99, false },
	{ "MetricsPort", CT_INT, OFF(metrics_port), 0, 65535, false },
};

#define N_KEYS (sizeof(conf_keys) / sizeof(conf_keys[0]))

void agora_conf_defaults(agora_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->sched_interval_s = 5;
	conf->embed_backfill = true;
	conf->app_def = AGORA_APP_ACCOUNT;
	conf->app_separator = '_';
	/* a sweep is submitted within minutes; an hour separates experiments
	 * (the burst apps of doc/evaluation.md) */
	conf->app_gap_s = 3600;
	conf->apps_per_account = POL_APPS_DEFAULT_PER_ACCOUNT;
	/* Themis (NSDI'20) evaluates f = 0.8: offers go to the worst 20%. */
	conf->fairness_knob = 0.8;
	/* Themis uses 10-minute leases; long enough to amortise restarts. */
	conf->lease_s = 600;
	conf->grace_s = 60;
	/* the agora policy's default (pol_agora.c, doc/evaluation.md) */
	conf->preempt_budget = 1;
	conf->preempt_every_s = 1800;
	conf->credit_half_life_h = 7 * 24;
	conf->credit_period_h = 7 * 24;
	conf->default_quota = 1000;
	/* site factor = NICE_OFFSET + CreditWeight * credit/quota in [-1,1] */
	conf->credit_weight = 10000;
	/* agorad decides within a round or two; a minute without a decision
	 * means it is down and the job goes on as stock Slurm would run it */
	conf->fed_auction_timeout_s = 60;
	conf->fed_pin_start_timeout_s = 300;
	conf->fed_interval_s = 2;
	/* a few rounds: a burst's copies keep a sibling busy for seconds */
	conf->fed_survey_max_age_s = 5;
	/* loaning: one spare node above demand, a period well inside the
	 * deadline, agora-sim's checkpoint model (doc/sim.md) */
	conf->loan_headroom = 1;
	conf->loan_interval_s = 10;
	conf->reclaim_deadline_s = 300;
	/* a victim's --signal warning: a minute at most, and never more than
	 * half the deadline (agora_conf_parse_string) */
	conf->reclaim_grace_s = 60;
	/* no limit: a limit keeps nodes from inference (doc/loaning.md) */
	conf->max_requeues = 0;
	/* a loan agorad has not renewed for ten minutes goes home (the
	 * federation round agorad also runs can stall ~90 s) */
	conf->loan_lease_timeout_s = 600;
	/* one failed demand read is no reason to reclaim every loan */
	conf->loan_demand_grace_s = 30;
	conf->loan_ckpt_s = 1800;
	conf->loan_restart_s = 120;
	/* half the checkpoint interval, as agora-sim's least-cost variants
	 * (set from LoanCheckpointInterval when unset) */
	conf->loan_ckpt_wait_s = 900;
	/* off: opt-in, as in agora-sim (doc/loaning.md) */
	conf->loan_ahead_s = 0;
	conf->loan_ahead_z = 1.5;
	conf->loan_demand_kind = AGORA_DEMAND_JOBS;
	/* elastic growth: a requeue at the new size must shorten the job by
	 * ten minutes; the default sublinear scaling curve (doc/loaning.md) */
	conf->loan_grow = true;
	conf->loan_grow_min_gain_s = 600;
	conf->loan_serial = 0.05;
}

void agora_conf_free(agora_conf_t *conf)
{
	size_t i;

	if (!conf)
		return;
	for (i = 0; i < conf->n_auction_partitions; i++)
		free(conf->auction_partitions[i]);
	free(conf->auction_partitions);
	for (i = 0; i < conf->n_quotas; i++)
		free(conf->quotas[i].account);
	free(conf->quotas);
	for (i = 0; i < conf->n_ckpts; i++)
		free(conf->ckpts[i].name);
	free(conf->ckpts);
	free(conf->topology_model);
	free(conf->fed_catalog);
	for (i = 0; i < conf->n_loan_infer_partitions; i++)
		free(conf->loan_infer_partitions[i]);
	free(conf->loan_infer_partitions);
	for (i = 0; i < conf->n_loan_train_partitions; i++)
		free(conf->loan_train_partitions[i]);
	free(conf->loan_train_partitions);
	free(conf->loan_demand_arg);
	memset(conf, 0, sizeof(*conf));
}

static char *trim(char *s)
{
	char *e;

	while (*s && isspace((unsigned char) *s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char) e[-1]))
		*--e = '\0';
	return s;
}

static int parse_double(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d))
		return -1;
	*out = d;
	return 0;
}

static int parse_long(const char *v, long *out)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(v, &end, 10);
	if (errno || end == v || *end)
		return -1;
	*out = l;
	return 0;
}

/* "90", "90s", "15m", "2h", "1d" -> whole seconds >= 0 */
static int parse_duration(const char *v, long *out)
{
	double d;

	if (agora_parse_seconds(v, strlen(v), &d) || d < 0 || d != floor(d) ||
	    d > (double) LONG_MAX / 2)
		return -1;
	*out = (long) d;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
	    !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") ||
	    !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char) *s) && !strchr("_-.", *s))
			return 0;
	return 1;
}

/* The key's error: "file:line: Key: why", errno EINVAL; returns -1 from
 * the function it is used in (err, name, line and k in scope there). */
#define BAD(...)                                                               \
	do {                                                                   \
		char why_[256];                                                \
		snprintf(why_, sizeof(why_), __VA_ARGS__);                     \
		agora_err_set(err, "%s:%d: %s: %s", name, line, k->name,       \
			      why_);                                           \
		errno = EINVAL;                                                \
		return -1;                                                     \
	} while (0)

/* The count beside a CT_LIST field. */
static size_t *list_count(agora_conf_t *c, const conf_key_t *k)
{
	if (k->offset == OFF(loan_infer_partitions))
		return &c->n_loan_infer_partitions;
	if (k->offset == OFF(loan_train_partitions))
		return &c->n_loan_train_partitions;
	return &c->n_auction_partitions;
}

/* CT_LIST: a comma-separated list of names, replacing the previous one. */
static int set_list(agora_conf_t *c, const conf_key_t *k, char *val,
		    const char *name, int line, agora_err_t *err)
{
	char *all = trim(val), *next = *all ? all : NULL, *tok;
	char **list = NULL, ***old;
	size_t n = 0, *count;

	/* "" is the empty list; an empty item ("a,,b", ",") is an error */
	while ((tok = strsep(&next, ","))) {
		char **nl;

		tok = trim(tok);
		if (!valid_name(tok)) {
			size_t i;

			for (i = 0; i < n; i++)
				free(list[i]);
			free(list);
			if (!*tok)
				BAD("an empty name in the list");
			BAD("'%s' is not a valid name in the list", tok);
		}
		nl = realloc(list, (n + 2) * sizeof(*list));
		if (!nl || !(nl[n] = strdup(tok))) {
			size_t i;

			list = nl ? nl : list;
			for (i = 0; i < n; i++)
				free(list[i]);
			free(list);
			agora_err_set(err, "%s:%d: out of memory", name, line);
			errno = ENOMEM;
			return -1;
		}
		list = nl;
		n++;
		list[n] = NULL;
	}
	old = (char ***) ((char *) c + k->offset);
	count = list_count(c, k);
	for (size_t i = 0; i < *count; i++)
		free((*old)[i]);
	free(*old);
	*old = list;
	*count = n;
	return 0;
}

/* CT_QUOTA: ACCOUNT:GPU_HOURS, one more account (each at most once). */
static int set_quota(agora_conf_t *c, const conf_key_t *k, char *val,
		     const char *name, int line, agora_err_t *err)
{
	char *colon = strrchr(val, ':');
	agora_quota_t *nq;
	char *acct;
	size_t i;
	double d;

	if (!colon)
		BAD("'%s' must be ACCOUNT:GPU_HOURS", val);
	*colon = '\0';
	acct = trim(val);
	if (!valid_name(acct))
		BAD("'%s' is not a valid account name", acct);
	if (parse_double(trim(colon + 1), &d))
		BAD("'%s' is not a number of GPU-hours", colon + 1);
	if (d < k->min || d > k->max)
		BAD("%g GPU-hours is out of range [%g, %g]", d, k->min, k->max);
	for (i = 0; i < c->n_quotas; i++)
		if (!strcmp(c->quotas[i].account, acct))
			BAD("account '%s' is given twice", acct);
	nq = realloc(c->quotas, (c->n_quotas + 1) * sizeof(*nq));
	if (!nq || !(nq[c->n_quotas].account = strdup(acct))) {
		if (nq)
			c->quotas = nq;
		agora_err_set(err, "%s:%d: out of memory", name, line);
		errno = ENOMEM;
		return -1;
	}
	c->quotas = nq;
	c->quotas[c->n_quotas].gpu_hours = d;
	c->n_quotas++;
	return 0;
}

/* CT_CKPT: DURATION, partition:NAME:DURATION or qos:NAME:DURATION (each
 * scope and name at most once). */
static int set_ckpt(agora_conf_t *c, const conf_key_t *k, char *val,
		    const char *name, int line, agora_err_t *err)
{
	char *colon = strrchr(val, ':'), *who = NULL;
	agora_ckpt_scope_t scope = AGORA_CKPT_ALL;
	agora_ckpt_t *nc;
	size_t i;
	long l;

	if (colon) {
		*colon = '\0';
		who = trim(val);
		if (!strncasecmp(who, "partition:", 10)) {
			scope = AGORA_CKPT_PARTITION;
			who = trim(who + 10);
		} else if (!strncasecmp(who, "qos:", 4)) {
			scope = AGORA_CKPT_QOS;
			who = trim(who + 4);
		} else {
			BAD("'%s' must be DURATION, partition:NAME:DURATION or qos:NAME:DURATION",
			    who);
		}
		if (!valid_name(who))
			BAD("'%s' is not a valid partition or QOS name", who);
		val = colon + 1;
	}
	if (parse_duration(trim(val), &l))
		BAD("'%s' is not a duration", val);
	if (l < k->min || l > k->max)
		BAD("%ld s is out of range [%g, %g]", l, k->min, k->max);
	for (i = 0; i < c->n_ckpts; i++)
		if (c->ckpts[i].scope == scope &&
		    (scope == AGORA_CKPT_ALL || !strcmp(c->ckpts[i].name, who)))
			BAD("%s%s is given twice",
			    scope == AGORA_CKPT_ALL   ? "the default"
			    : scope == AGORA_CKPT_QOS ? "qos:"
						      : "partition:",
			    scope == AGORA_CKPT_ALL ? "" : who);
	nc = realloc(c->ckpts, (c->n_ckpts + 1) * sizeof(*nc));
	if (!nc || (who && !(nc[c->n_ckpts].name = strdup(who)))) {
		if (nc)
			c->ckpts = nc;
		agora_err_set(err, "%s:%d: out of memory", name, line);
		errno = ENOMEM;
		return -1;
	}
	c->ckpts = nc;
	if (!who)
		c->ckpts[c->n_ckpts].name = NULL;
	c->ckpts[c->n_ckpts].scope = scope;
	c->ckpts[c->n_ckpts].ckpt_s = (int) l;
	c->n_ckpts++;
	return 0;
}

/* CT_DEMAND: jobs, file:PATH or command:CMD. */
static int set_demand(agora_conf_t *c, const conf_key_t *k, char *val,
		      const char *name, int line, agora_err_t *err)
{
	agora_demand_kind_t kind;
	const char *arg = NULL;
	char *copy = NULL;

	if (!strcasecmp(val, "jobs"))
		kind = AGORA_DEMAND_JOBS;
	else if (!strncasecmp(val, "file:", 5)) {
		kind = AGORA_DEMAND_FILE;
		arg = trim(val + 5);
		if (arg[0] != '/')
			BAD("'%s': file: needs an absolute path", val);
	} else if (!strncasecmp(val, "command:", 8)) {
		kind = AGORA_DEMAND_COMMAND;
		arg = trim(val + 8);
		if (!*arg)
			BAD("'%s': command: needs a command", val);
		else {
			/* run without a shell (agora_argv.h): its words and
			 * program are checked here, not at the first round */
			agora_err_t e = { { 0 } };
			char **argv;

			if (agora_argv_split(arg, "command", &argv, &e) < 0)
				BAD("'%.60s': %.160s", val, e.text);
			free(argv);
		}
	} else
		BAD("'%s' is not one of jobs, file:PATH, command:CMD", val);
	if (arg && !(copy = strdup(arg))) {
		agora_err_set(err, "%s:%d: out of memory", name, line);
		errno = ENOMEM;
		return -1;
	}
	free(c->loan_demand_arg);
	c->loan_demand_arg = copy;
	c->loan_demand_kind = kind;
	return 0;
}

/* Set one key.  Returns 0, or -1 with err filled (errno set). */
static int conf_set(agora_conf_t *c, const conf_key_t *k, char *val,
		    const char *name, int line, agora_err_t *err)
{
	void *field = (char *) c + k->offset;
	double d;
	long l;
	bool b;

	switch (k->type) {
	case CT_INT:
		if (parse_long(val, &l))
			BAD("'%s' is not an integer", val);
		if (l < k->min || l > k->max)
			BAD("%ld is out of range [%.0f, %.0f]", l, k->min,
			    k->max);
		*(int *) field = (int) l;
		break;
	case CT_DURATION:
		if (parse_duration(val, &l))
			BAD("'%s' is not a duration (seconds, or with suffix s/m/h/d)",
			    val);
		if (l < k->min || l > k->max)
			BAD("%ld s is out of range [%.0f, %.0f] s", l, k->min,
			    k->max);
		*(int *) field = (int) l;
		break;
	case CT_DOUBLE:
		if (parse_double(val, &d))
			BAD("'%s' is not a number", val);
		if (d < k->min || d > k->max)
			BAD("%g is out of range [%g, %g]", d, k->min, k->max);
		*(double *) field = d;
		break;
	case CT_BOOL:
		if (parse_bool(val, &b))
			BAD("'%s' is not yes/no", val);
		*(bool *) field = b;
		break;
	case CT_APPDEF:
		if (!strcasecmp(val, "account"))
			c->app_def = AGORA_APP_ACCOUNT;
		else if (!strcasecmp(val, "user"))
			c->app_def = AGORA_APP_USER;
		else if (!strcasecmp(val, "name_prefix"))
			c->app_def = AGORA_APP_NAME_PREFIX;
		else if (!strcasecmp(val, "array"))
			c->app_def = AGORA_APP_ARRAY;
		else if (!strcasecmp(val, "burst"))
			c->app_def = AGORA_APP_BURST;
		else
			BAD("'%s' is not one of account, user, name_prefix, array, burst",
			    val);
		break;
	case CT_PLACEMENT:
		if (!strcasecmp(val, "agora"))
			c->placement = AGORA_PLACEMENT_AGORA;
		else if (!strcasecmp(val, "stock"))
			c->placement = AGORA_PLACEMENT_STOCK;
		else
			BAD("'%s' is not one of agora, stock", val);
		break;
	case CT_CHAR:
		if (strlen(val) != 1 || isspace((unsigned char) val[0]) ||
		    val[0] == '#')
			BAD("'%s' must be a single non-blank character", val);
		*(char *) field = val[0];
		break;
	case CT_STRING: {
		char *s = strdup(val);

		if (!s) {
			agora_err_set(err, "%s:%d: out of memory", name, line);
			errno = ENOMEM;
			return -1;
		}
		free(*(char **) field);
		*(char **) field = s;
		break;
	}
	case CT_LIST:
		return set_list(c, k, val, name, line, err);
	case CT_QUOTA:
		return set_quota(c, k, val, name, line, err);
	case CT_DEMAND:
		return set_demand(c, k, val, name, line, err);
	case CT_CKPT:
		return set_ckpt(c, k, val, name, line, err);
	}
	return 0;
}
#undef BAD

/* Checks across keys, after the whole file parsed: Loaning=yes needs
 * both partition lists, and no partition may be in both.  line: the
 * Loaning line. */
static int conf_check_loan(const agora_conf_t *c, const char *name, int line,
			   int lease_line, int grace_line, agora_err_t *err)
{
	if (!c->loaning)
		return 0;
	/* the grace is spent inside the reclaim's deadline */
	if (grace_line && c->reclaim_grace_s >= c->reclaim_deadline_s) {
		agora_err_set(
			err,
			"%s:%d: ReclaimGrace: %d s is not less than ReclaimDeadline (%d s)",
			name, grace_line, c->reclaim_grace_s,
			c->reclaim_deadline_s);
		errno = EINVAL;
		return -1;
	}
	if (!c->n_loan_infer_partitions || !c->n_loan_train_partitions) {
		agora_err_set(
			err,
			"%s:%d: Loaning: yes needs LoanInferencePartitions and LoanTrainPartitions",
			name, line);
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 0; i < c->n_loan_infer_partitions; i++)
		if (agora_conf_loan_partition(c, c->loan_infer_partitions[i],
					      false)) {
			agora_err_set(
				err,
				"%s:%d: LoanTrainPartitions: '%s' is also an inference partition",
				name, line, c->loan_infer_partitions[i]);
			errno = EINVAL;
			return -1;
		}
	/* agorad renews a lease every LoanInterval at best: a shorter
	 * lease would return nodes agorad still keeps */
	if (c->loan_lease_timeout_s &&
	    c->loan_lease_timeout_s < 3 * c->loan_interval_s) {
		agora_err_set(
			err,
			"%s:%d: LoanLeaseTimeout: %d s is less than 3 x LoanInterval (%d s); use 0 to disable the lease",
			name, lease_line ? lease_line : line,
			c->loan_lease_timeout_s, 3 * c->loan_interval_s);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* LoanCheckpointWait unset: half of LoanCheckpointInterval; a reclaim
 * ahead goes through that wait, so it needs one. */
static int conf_check_wait(agora_conf_t *c, const char *name, int wait_line,
			   int ahead_line, agora_err_t *err)
{
	if (!wait_line)
		c->loan_ckpt_wait_s = c->loan_ckpt_s / 2;
	if (ahead_line && c->loan_ahead_s > 0 &&
	    (!c->loan_ckpt_wait_s || !c->loan_ckpt_s)) {
		agora_err_set(
			err,
			"%s:%d: LoanReclaimAhead: needs LoanCheckpointInterval and LoanCheckpointWait above 0 (a reclaim ahead waits for its victims' checkpoints)",
			name, ahead_line);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int agora_conf_parse_string(const char *text, const char *name,
			    agora_conf_t *conf, agora_err_t *err)
{
	agora_conf_t tmp;
	char *copy, *line, *next;
	int lineno = 0, rc = -1, loan_line = 0, lease_line = 0, grace_line = 0;
	int wait_line = 0, ahead_line = 0;
	unsigned char seen[N_KEYS] = { 0 };

	if (!text || !conf) {
		agora_err_set(err, "%s: no input", name ? name : "agora.conf");
		errno = EINVAL;
		return -1;
	}
	if (!name)
		name = "agora.conf";
	copy = strdup(text);
	if (!copy) {
		agora_err_set(err, "%s: out of memory", name);
		errno = ENOMEM;
		return -1;
	}
	agora_conf_defaults(&tmp);

	for (line = copy; line; line = next) {
		char *hash, *eq, *key, *val;
		const conf_key_t *k = NULL;
		size_t i;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		line = trim(line);
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			agora_err_set(err, "%s:%d: '%.64s': expected Key=Value",
				      name, lineno, line);
			errno = EINVAL;
			goto out;
		}
		*eq = '\0';
		key = trim(line);
		val = trim(eq + 1);
		for (i = 0; i < N_KEYS; i++)
			if (!strcasecmp(conf_keys[i].name, key)) {
				k = &conf_keys[i];
				break;
			}
		if (!k) {
			agora_err_set(err, "%s:%d: %.64s: unknown key", name,
				      lineno, key[0] ? key : "(empty)");
			errno = EINVAL;
			goto out;
		}
		if (seen[i] && !k->repeatable) {
			agora_err_set(err, "%s:%d: %s: given more than once",
				      name, lineno, k->name);
			errno = EINVAL;
			goto out;
		}
		seen[i] = 1;
		if (!*val) {
			agora_err_set(err, "%s:%d: %s: empty value", name,
				      lineno, k->name);
			errno = EINVAL;
			goto out;
		}
		if (conf_set(&tmp, k, val, name, lineno, err))
			goto out;
		if (k->offset == OFF(loaning))
			loan_line = lineno;
		if (k->offset == OFF(loan_lease_timeout_s))
			lease_line = lineno;
		if (k->offset == OFF(reclaim_grace_s))
			grace_line = lineno;
		if (k->offset == OFF(loan_ckpt_wait_s))
			wait_line = lineno;
		if (k->offset == OFF(loan_ahead_s))
			ahead_line = lineno;
	}
	/* ReclaimGrace unset: 60 s, at most half of ReclaimDeadline */
	if (!grace_line && tmp.reclaim_grace_s > tmp.reclaim_deadline_s / 2)
		tmp.reclaim_grace_s = tmp.reclaim_deadline_s / 2;
	if (conf_check_loan(&tmp, name, loan_line, lease_line, grace_line,
			    err) ||
	    conf_check_wait(&tmp, name, wait_line, ahead_line, err))
		goto out;
	rc = 0;
	agora_conf_free(conf);
	*conf = tmp;
out:
	if (rc)
		agora_conf_free(&tmp);
	free(copy);
	return rc;
}

int agora_conf_parse_file(const char *path, agora_conf_t *conf,
			  agora_err_t *err)
{
	struct stat st;
	char *buf;
	size_t len;
	int rc, saved;

	if (agora_file_read_ex(path, AGORA_CONF_MAX_BYTES, AGORA_FILE_FOLLOW,
			       &buf, &len, &st, err) < 0)
		return -1;
	/* anyone who can write it could grant credit, lend nodes or run a
	 * LoanDemandSource command: refused, like a bad key */
	if (st.st_mode & S_IWOTH) {
		free(buf);
		agora_err_set(
			err,
			"%s: writable by others (mode %04o): refused (chmod o-w)",
			path, (unsigned) (st.st_mode & 07777));
		errno = EPERM;
		return -1;
	}
	rc = agora_conf_parse_string(buf, path, conf, err);
	saved = errno;
	free(buf);
	errno = saved;
	return rc;
}
