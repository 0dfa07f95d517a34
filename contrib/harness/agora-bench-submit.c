/*
 * agora-bench-submit - submits batch jobs through the public libslurm
 * (slurm_submit_batch_job) from several processes at once, for
 * tests/integration/bench-dispatch.sh: a submitter that is not limited by
 * a process start per job, as sbatch is.  Not installed, not a test.
 *
 *   agora-bench-submit -n JOBS -p PROCS -o PREFIX [-A ACCOUNT] [-g GRES]
 *                      [-t MINUTES] [-M CLUSTERS] [-s SECONDS] [-r RATE]
 *
 * Each of PROCS processes submits its share of JOBS (the first ones one
 * more when JOBS is not a multiple) and writes "jobid ms" per job to
 * PREFIX.K (K = 1..PROCS), at RATE jobs/s over all processes if -r is
 * given (each paces its own share), else as fast as it can; ms being CLOCK_REALTIME in milliseconds just
 * before the submit RPC, the clock agorad stamps its pins with.  The job
 * description is the one "sbatch -A ACCOUNT --gres=GRES -t MINUTES
 * -o /dev/null --wrap 'sleep SECONDS'" builds on Slurm 22.05 and 24.11:
 * name "wrap", the caller's uid, gid, working directory and whole
 * environment (sbatch's default --export=ALL), tres_per_node
 * "gres:GRES", time_limit, std_out, and the --wrap script; -M sets the
 * job's Clusters= as sbatch's --clusters does not (that one picks the
 * cluster to submit to; this always submits to SLURM_CONF's cluster).
 * A submit refused with EAGAIN (slurmctld busy) is retried up to 20 times
 * after 50 ms; any other error is counted and reported.  Exit status:
 * 0 if every job was submitted, 1 otherwise.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include "agora_compat_pub.h"

extern char **environ;

typedef struct opts {
	long jobs;
	long procs;
	const char *prefix;
	const char *account;
	const char *gres;
	const char *clusters;
	long minutes;
	long sleep_s;
	long rate; /* jobs/s over all processes; 0: as fast as possible */
} opts_t;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: agora-bench-submit -n JOBS -p PROCS -o PREFIX [-A ACCOUNT] [-g GRES]\n"
		"                          [-t MINUTES] [-M CLUSTERS] [-s SECONDS] [-r RATE]\n");
}

static int parse_long(const char *opt, const char *s, long lo, long hi,
		      long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr,
			"agora-bench-submit: %s: '%s' is not a number in %ld..%ld\n",
			opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, opts_t *o)
{
	int c;

	*o = (opts_t){ .jobs = 0,
		       .procs = 1,
		       .account = NULL,
		       .gres = "gpu:1",
		       .minutes = 2,
		       .sleep_s = 20 };
	while ((c = getopt(argc, argv, "n:p:o:A:g:t:M:s:r:h")) != -1) {
		switch (c) {
		case 'n':
			if (parse_long("-n", optarg, 1, 10000000, &o->jobs))
				return -1;
			break;
		case 'p':
			if (parse_long("-p", optarg, 1, 256, &o->procs))
				return -1;
			break;
		case 't':
			if (parse_long("-t", optarg, 1, 525600, &o->minutes))
				return -1;
			break;
		case 's':
			if (parse_long("-s", optarg, 0, 86400, &o->sleep_s))
				return -1;
			break;
		case 'r':
			if (parse_long("-r", optarg, 1, 1000000, &o->rate))
				return -1;
			break;
		case 'o':
			o->prefix = optarg;
			break;
		case 'A':
			o->account = optarg;
			break;
		case 'g':
			o->gres = optarg;
			break;
		case 'M':
			o->clusters = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc || !o->jobs || !o->prefix) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* The job description sbatch builds for the options (see the head). */
static int fill_desc(const opts_t *o, job_desc_msg_t *d, char *tres,
		     size_t tres_len, char *script, size_t script_len,
		     char *cwd, size_t cwd_len)
{
	uint32_t n_env = 0;

	if (!getcwd(cwd, cwd_len))
		return -1;
	if ((size_t) snprintf(tres, tres_len, "gres:%s", o->gres) >= tres_len)
		return -1;
	if ((size_t) snprintf(script, script_len,
			      "#!/bin/sh\n"
			      "# This script was created by sbatch --wrap.\n\n"
			      "sleep %ld\n",
			      o->sleep_s) >= script_len)
		return -1;
	while (environ[n_env])
		n_env++;
	slurm_init_job_desc_msg(d);
	d->name = (char *) "wrap";
	d->account = (char *) o->account;
	d->clusters = (char *) o->clusters;
	d->tres_per_node = tres;
	d->time_limit = (uint32_t) o->minutes;
	d->std_out = (char *) "/dev/null";
	d->work_dir = cwd;
	d->user_id = getuid();
	d->group_id = getgid();
	d->environment = environ;
	d->env_size = n_env;
	d->script = script;
	return 0;
}

/* Sleep until t_ms (CLOCK_REALTIME ms), if it is ahead. */
static void sleep_until(int64_t t_ms)
{
	int64_t d = t_ms - now_ms();

	if (d > 0) {
		struct timespec ts = { (time_t) (d / 1000),
				       (long) (d % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
}

/* One submitter: its n jobs, "jobid ms" lines into path, the k-th not
 * before start_ms + k * period_us / 1000 (period_us 0: no pacing).
 * Returns the number of jobs not submitted. */
static long submitter(const opts_t *o, long n, const char *path,
		      int64_t start_ms, int64_t period_us)
{
	char tres[256], script[256], cwd[PATH_MAX];
	job_desc_msg_t d;
	FILE *f = fopen(path, "w");
	long failed = 0;
	int last_err = 0;

	if (!f) {
		fprintf(stderr, "agora-bench-submit: %s: %s\n", path,
			strerror(errno));
		return n;
	}
	if (fill_desc(o, &d, tres, sizeof(tres), script, sizeof(script), cwd,
		      sizeof(cwd))) {
		fprintf(stderr,
			"agora-bench-submit: -g '%s' too long, or no working directory\n",
			o->gres);
		fclose(f);
		return n;
	}
	for (long k = 0; k < n; k++) {
		submit_response_msg_t *resp = NULL;
		int64_t t0;
		int rc = -1;

		if (period_us)
			sleep_until(start_ms + k * period_us / 1000);
		t0 = now_ms();

		for (int tries = 0; tries < 20; tries++) {
			rc = slurm_submit_batch_job(&d, &resp);
			if (!rc)
				break;
			last_err = slurm_get_errno();
			if (last_err != EAGAIN)
				break;
			nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
		}
		if (rc || !resp) {
			failed++;
			continue;
		}
		fprintf(f, "%u %lld\n", resp->job_id, (long long) t0);
		slurm_free_submit_response_response_msg(resp);
	}
	if (failed)
		fprintf(stderr,
			"agora-bench-submit: %s: %ld of %ld jobs not submitted (last error: %s)\n",
			path, failed, n, slurm_strerror(last_err));
	if (fclose(f)) {
		fprintf(stderr, "agora-bench-submit: %s: %s\n", path,
			strerror(errno));
		return n;
	}
	return failed;
}

int main(int argc, char **argv)
{
	opts_t o;
	pid_t *kids;
	int bad = 0;
	int64_t start_ms, period_us;

	if (parse_opts(argc, argv, &o))
		return 2;
	if (o.procs > o.jobs)
		o.procs = o.jobs;
	kids = calloc((size_t) o.procs, sizeof(*kids));
	if (!kids) {
		perror("agora-bench-submit");
		return 1;
	}
	slurm_init(NULL);
	/* paced: each process at rate/procs, the processes offset evenly */
	period_us = o.rate ? o.procs * 1000000L / o.rate : 0;
	start_ms = now_ms();
	/* all at once: each process submits as soon as it is forked */
	for (long s = 0; s < o.procs; s++) {
		long n = o.jobs / o.procs + (s < o.jobs % o.procs ? 1 : 0);
		char path[PATH_MAX];

		if ((size_t) snprintf(path, sizeof(path), "%s.%ld", o.prefix,
				      s + 1) >= sizeof(path)) {
			fprintf(stderr, "agora-bench-submit: -o too long\n");
			bad = 1;
			break;
		}
		kids[s] = fork();
		if (kids[s] == 0)
			_exit(submitter(&o, n, path,
					start_ms +
						s * period_us / o.procs / 1000,
					period_us)
				      ? 1
				      : 0);
		if (kids[s] < 0) {
			perror("agora-bench-submit: fork");
			bad = 1;
			break;
		}
	}
	for (long s = 0; s < o.procs; s++) {
		int st;

		if (kids[s] <= 0)
			continue;
		while (waitpid(kids[s], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	free(kids);
	slurm_fini();
	return bad;
}
