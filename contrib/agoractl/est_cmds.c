/*
 * est_cmds.c - agoractl estimates: seed the auction's run-time history
 * (pol_estimate.h) from slurmdbd.
 *
 *   agoractl estimates seed [--days N] [--out FILE] [--agora-conf FILE]
 *
 * The auction estimates a job's remaining time from the run times of the
 * same user's recent completed jobs (site_factor/agora learns them as jobs
 * end).  A new installation, or one whose history file was lost, starts
 * with none; this command reads the COMPLETED and TIMEOUT jobs of the
 * last N days (default 30) of this cluster from slurmdbd (the public
 * slurmdb jobs query, sacct's own) and writes them in the history's text
 * format, keyed as the plugin keys them (app per agora.conf's
 * AppDefinition, uid, GPUs).  The default output is
 * StateSaveLocation/agora_estimates.seed, which site_factor/agora merges
 * at its next start or 'scontrol reconfigure' and then renames
 * .merged.<time>.  Run it on the controller as SlurmUser or root.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include "ac_out.h"
#include "agora_compat_pub.h"
#include <slurm/slurmdb.h>

#include "agora_conf.h"
#include "agora_file.h"
#include "est_cmds.h"
#include "pol_app.h"
#include "pol_estimate.h"

bool agoractl_est_command(const char *cmd)
{
	return !strcmp(cmd, "estimates");
}

/* The TRES id of gres/gpu in slurmdbd, 0 if it has none. */
static uint32_t gpu_tres_id(void *db)
{
	slurmdb_tres_cond_t cond;
	slurmdb_tres_rec_t *t;
	ListIterator it;
	List l;
	uint32_t id = 0;

	memset(&cond, 0, sizeof(cond));
	cond.with_deleted = 1;
	if (!(l = slurmdb_tres_get(db, &cond)))
		return 0;
	it = slurm_list_iterator_create(l);
	while ((t = slurm_list_next(it)))
		if (t->type && t->name && !strcmp(t->type, "gres") &&
		    !strcmp(t->name, "gpu"))
			id = t->id;
	slurm_list_iterator_destroy(it);
	slurm_list_destroy(l);
	return id;
}

/* "1=4,2=1000,1001=8": the count of TRES id, 0 if absent. */
static int tres_count(const char *s, uint32_t id)
{
	while (s && *s) {
		char *end;
		unsigned long k = strtoul(s, &end, 10);

		if (*end == '=' && k == id)
			return atoi(end + 1);
		s = strchr(s, ',');
		if (s)
			s++;
	}
	return 0;
}

/* The app of a job as site_factor/agora names it (agora_conf_app_name,
 * then the key). */
static void job_app(const agora_conf_t *conf, const slurmdb_job_rec_t *j,
		    char key[POL_APP_KEY_LEN])
{
	char *name = agora_conf_app_name(conf, j->account, j->uid, j->jobname);

	(void) pol_app_key(name ? name : "", key);
	free(name);
}

/* Record the completed GPU jobs of l into est; returns how many. */
static int record_jobs(List l, uint32_t gpu_id, const agora_conf_t *conf,
		       pol_est_t *est)
{
	ListIterator it = slurm_list_iterator_create(l);
	slurmdb_job_rec_t *j;
	int n = 0;

	while ((j = slurm_list_next(it))) {
		uint32_t st = j->state & JOB_STATE_BASE;
		char app[POL_APP_KEY_LEN], uid[24];
		pol_est_key_t key;
		int64_t run;

		if ((st != JOB_COMPLETE && st != JOB_TIMEOUT) || !j->start ||
		    j->end < j->start)
			continue;
		key.gpus = tres_count(j->tres_alloc_str, gpu_id);
		run = (int64_t) (j->end - j->start) - (int64_t) j->suspended;
		if (key.gpus <= 0 || run < 0)
			continue;
		job_app(conf, j, app);
		snprintf(uid, sizeof(uid), "%u", j->uid);
		key.app = app;
		key.user = uid;
		key.name = NULL; /* the plugin keys without names */
		/* under AppDefinition=burst, array and name_prefix app is the
		 * account: the account's samples, which the plugin also keeps
		 * beside each app's (pol_estimate.h) */
		key.account = NULL;
		if (pol_est_record(est, &key, run, (int64_t) j->end) > 0)
			n++;
	}
	slurm_list_iterator_destroy(it);
	return n;
}

/* The completed jobs of cluster since 'since', from slurmdbd (NULL and a
 * message on error). */
static List db_jobs(void *db, const char *cluster, time_t since, time_t now)
{
	slurmdb_job_cond_t cond;
	List l;

	memset(&cond, 0, sizeof(cond));
	cond.cluster_list = slurm_list_create(NULL);
	slurm_list_append(cond.cluster_list, (void *) cluster);
	cond.flags = JOBCOND_FLAG_NO_STEP;
	cond.db_flags = SLURMDB_JOB_FLAG_NOTSET; /* 0 would filter on flags */
	cond.usage_start = since;
	cond.usage_end = now;
	l = slurmdb_jobs_get(db, &cond);
	slurm_list_destroy(cond.cluster_list);
	if (!l)
		ac_err("slurmdbd: cannot read jobs: %s\n",
		       slurm_strerror(slurm_get_errno()));
	return l;
}

static int seed_usage(void)
{
	fprintf(stderr,
		"usage: agoractl estimates seed [--days N] [--out FILE] [--agora-conf FILE]\n"
		"  the COMPLETED/TIMEOUT GPU jobs of the last N days [30] from slurmdbd,\n"
		"  as StateSaveLocation/agora_estimates.seed, merged by site_factor/agora\n"
		"  at its next start or scontrol reconfigure\n");
	return 2;
}

/* The paths of agora.conf (beside SLURM_CONF) and of the seed file. */
static int seed_paths(const char *conf_opt, const char *out_opt,
		      const slurm_conf_t *sc, char *conf_path, char *out_path,
		      size_t size)
{
	const char *env = getenv("SLURM_CONF");
	char *copy = strdup(env && *env ? env : "/etc/slurm/slurm.conf");

	if (!copy)
		return -1;
	if (conf_opt)
		snprintf(conf_path, size, "%s", conf_opt);
	else
		snprintf(conf_path, size, "%s/agora.conf", dirname(copy));
	free(copy);
	if (out_opt)
		snprintf(out_path, size, "%s", out_opt);
	else if (sc->state_save_location)
		snprintf(out_path, size, "%s/agora_estimates.seed",
			 sc->state_save_location);
	else
		return -1;
	return 0;
}

/* Write est's state to path; 0 or -1 with a message. */
static int seed_write(const pol_est_t *est, const char *path)
{
	agora_err_t err = { { 0 } };
	char *text = pol_est_save(est);
	int rc = 0;

	if (!text) {
		ac_err("out of memory\n");
		return -1;
	}
	if (agora_file_write_atomic(path, text, strlen(text), &err)) {
		ac_err("%s\n", err.text);
		rc = -1;
	}
	free(text);
	return rc;
}

static int cmd_seed(int argc, char **argv)
{
	const char *out_opt = NULL, *conf_opt = NULL;
	char conf_path[4096], out_path[4096], *end;
	agora_err_t err = { { 0 } };
	slurm_conf_t *sc = NULL;
	agora_conf_t conf;
	pol_est_t *est = NULL;
	void *db = NULL;
	List l = NULL;
	long days = 30;
	int n = -1;
	time_t now = time(NULL);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--days") && i + 1 < argc) {
			errno = 0;
			days = strtol(argv[++i], &end, 10);
			if (errno || *end || days < 1 || days > 3650) {
				ac_err("--days: '%s': expected 1 to 3650\n",
				       argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			out_opt = argv[++i];
		} else if (!strcmp(argv[i], "--agora-conf") && i + 1 < argc) {
			conf_opt = argv[++i];
		} else {
			return seed_usage();
		}
	}
	slurm_init(NULL);
	agora_conf_defaults(&conf);
	if (slurm_load_ctl_conf(0, &sc) || !sc->cluster_name) {
		ac_err("cannot read slurmctld's configuration: %s\n",
		       slurm_strerror(slurm_get_errno()));
		goto out;
	}
	if (seed_paths(conf_opt, out_opt, sc, conf_path, out_path,
		       sizeof(conf_path))) {
		ac_err("no StateSaveLocation: pass --out FILE\n");
		goto out;
	}
	/* the default agora.conf may be missing (defaults); one named with
	 * --agora-conf must be there, or the seed is keyed by the wrong
	 * AppDefinition without a word */
	if ((conf_opt || !access(conf_path, F_OK)) &&
	    agora_conf_parse_file(conf_path, &conf, &err)) {
		ac_err("%s\n", err.text);
		goto out;
	}
	if (!(db = slurmdb_connection_get(NULL))) {
		ac_err("cannot connect to slurmdbd: %s\n",
		       slurm_strerror(slurm_get_errno()));
		goto out;
	}
	if (!(l = db_jobs(db, sc->cluster_name, now - days * 86400, now)))
		goto out;
	if (!(est = pol_est_create(NULL))) {
		ac_err("out of memory\n");
		goto out;
	}
	n = record_jobs(l, gpu_tres_id(db), &conf, est);
	if (seed_write(est, out_path)) {
		n = -1;
		goto out;
	}
	/* slurmctld runs as SlurmUser and reads it (mode 0600) */
	if (!out_opt && geteuid() == 0 &&
	    chown(out_path, sc->slurm_user_id, (gid_t) -1))
		ac_err("chown %s to SlurmUser: %s\n", out_path,
		       strerror(errno));
	if (ac_json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "file", ac_str(out_path));
		json_object_object_add(o, "jobs", ac_int(n));
		json_object_object_add(o, "cluster", ac_str(sc->cluster_name));
		json_object_object_add(o, "days", ac_int(days));
		json_object_object_add(o, "records",
				       ac_int(slurm_list_count(l)));
		ac_add("seed", o);
	}
	printf("%s: %d completed GPU jobs of cluster %s in the last %ld days (of %d job records); site_factor/agora merges them at its next start or scontrol reconfigure\n",
	       out_path, n, sc->cluster_name, days, slurm_list_count(l));
out:
	if (l)
		slurm_list_destroy(l);
	if (db)
		slurmdb_connection_close(&db);
	pol_est_destroy(&est);
	agora_conf_free(&conf);
	if (sc)
		slurm_free_ctl_conf(sc);
	slurm_fini();
	return n < 0 ? 1 : 0;
}

int agoractl_est_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "seed"))
		return cmd_seed(argc - 1, argv + 1);
	return seed_usage();
}
