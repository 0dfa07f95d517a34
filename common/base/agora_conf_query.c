/*
 * agora_conf_query.c - lookups in a parsed agora.conf (agora_conf.h): an
 * account's quota, the checkpoint interval of a partition or QOS, whether
 * a partition is an auction or loan partition, names of enum values, and
 * the app a job belongs to.  The parser is agora_conf.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agora_conf.h"
#include "pol_app.h"
#include "pol_apps.h"

int agora_conf_ckpt(const agora_conf_t *conf, const char *partition,
		    const char *qos)
{
	int all = 0, part = 0;
	size_t i;

	for (i = 0; conf && i < conf->n_ckpts; i++) {
		const agora_ckpt_t *r = &conf->ckpts[i];

		if (r->scope == AGORA_CKPT_QOS && qos && !strcmp(r->name, qos))
			return r->ckpt_s;
		if (r->scope == AGORA_CKPT_PARTITION && partition &&
		    !strcmp(r->name, partition))
			part = r->ckpt_s;
		if (r->scope == AGORA_CKPT_ALL)
			all = r->ckpt_s;
	}
	return part ? part : all;
}

double agora_conf_quota(const agora_conf_t *conf, const char *account)
{
	size_t i;

	if (account)
		for (i = 0; i < conf->n_quotas; i++)
			if (!strcmp(conf->quotas[i].account, account))
				return conf->quotas[i].gpu_hours;
	return conf->default_quota;
}

bool agora_conf_loan_partition(const agora_conf_t *conf, const char *part,
			       bool infer)
{
	char **l = infer ? conf->loan_infer_partitions
			 : conf->loan_train_partitions;
	size_t n = infer ? conf->n_loan_infer_partitions
			 : conf->n_loan_train_partitions;

	/* a pending job submitted to "-p train,x" shows "train,x": any of
	 * its partitions counts */
	for (const char *p = part; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t) (e - p) : strlen(p);

		for (size_t i = 0; i < n; i++)
			if (strlen(l[i]) == len && !strncmp(l[i], p, len))
				return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

bool agora_conf_auction_partition(const agora_conf_t *conf, const char *part)
{
	size_t i;

	if (!part)
		return false;
	for (i = 0; i < conf->n_auction_partitions; i++)
		if (!strcmp(conf->auction_partitions[i], part))
			return true;
	return false;
}

const char *agora_placement_name(agora_placement_t p)
{
	switch (p) {
	case AGORA_PLACEMENT_AGORA:
		return "agora";
	case AGORA_PLACEMENT_STOCK:
		return "stock";
	}
	return "unknown";
}

_Static_assert((int) AGORA_APP_ACCOUNT == (int) POL_APPS_ACCOUNT &&
		       (int) AGORA_APP_USER == (int) POL_APPS_USER &&
		       (int) AGORA_APP_NAME_PREFIX ==
			       (int) POL_APPS_NAME_PREFIX &&
		       (int) AGORA_APP_ARRAY == (int) POL_APPS_ARRAY &&
		       (int) AGORA_APP_BURST == (int) POL_APPS_BURST,
	       "agora_app_def_t follows pol_apps_def_t");

const char *agora_app_def_name(agora_app_def_t def)
{
	const char *n = pol_apps_def_name((pol_apps_def_t) def);

	return n ? n : "unknown";
}

void agora_conf_apps_spec(const agora_conf_t *conf, pol_apps_spec_t *spec)
{
	spec->def = (pol_apps_def_t) conf->app_def;
	spec->gap_s = conf->app_gap_s;
	spec->separator = conf->app_separator;
	spec->max_per_account = conf->apps_per_account;
}

void agora_conf_app_key(const agora_conf_t *conf, const char *account,
			unsigned int uid, char out[POL_APP_KEY_LEN])
{
	char user[sizeof("user:") + 10];

	if (conf->app_def == AGORA_APP_USER) {
		snprintf(user, sizeof(user), "user:%u", uid);
		pol_app_key(user, out);
	} else {
		pol_app_key(account, out);
	}
}

char *agora_conf_app_name(const agora_conf_t *conf, const char *account,
			  unsigned int uid, const char *job_name)
{
	char *p;
	size_t n;

	(void) job_name; /* apps of names are grouped by pol_apps_build() */
	switch (conf->app_def) {
	case AGORA_APP_USER:
		n = sizeof("user:") + 10;
		if ((p = malloc(n)))
			snprintf(p, n, "user:%u", uid);
		return p;
	case AGORA_APP_NAME_PREFIX:
	case AGORA_APP_ARRAY:
	case AGORA_APP_BURST:
	case AGORA_APP_ACCOUNT:
	default:
		return strdup(account ? account : "");
	}
}
