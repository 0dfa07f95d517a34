/*
 * agorad - Agora's federation helper: MAST's cross-cluster auction for the
 * federated GPU jobs of a Slurm federation (doc/federation.md).
 *
 * Every FedAuctionInterval it runs one round (agorad_round.c): the jobs
 * job_submit/agora holds at their origin are offered to every cluster of
 * the federation (a will-run on each, in parallel), the core's batched
 * auction (common/fed/pol_fed.h) picks each job's cluster, and agorad pins
 * the job there (Clusters=<winner>) and releases it.  It uses only the
 * public libslurm/libslurmdb API and runs as SlurmUser (or root).
 *
 * Fail open: agorad is never needed for a job to run.  Without its
 * requests job_submit/agora holds nothing, and site_factor/agora releases
 * any hold older than FedAuctionTimeout.  agorad keeps no state a crash
 * could lose: each round starts from what Slurm shows.
 *
 * Two processes: this one runs the federation's rounds; a child (the
 * loan process, started at once and again if it dies) runs the loan
 * round on the local cluster in its own loop, so that a federation round
 * waiting on an unreachable cluster never delays a reclaim past
 * ReclaimDeadline.  --once runs one round of both in this process.
 *
 * Signals: SIGTERM/SIGINT stop after the current round; the loan process
 * takes every lent node out of the training partitions (ad_loan_return)
 * and this one waits for it; SIGHUP reopens the log file and re-reads
 * agora.conf (forwarded to the loan process).  An invalid agora.conf at
 * start is not an exit (a crash loop under Restart=on-failure) but the
 * return-only mode: nothing is held, lent or renewed, so slurmctld's loan
 * lease brings every lent node home, until agora.conf reads again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agora_config.h"

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agorad.h"
#include "agorad_loan.h"
#include "agorad_relaunch.h"
#include "pol_fed_pace.h"

/* Where the systemd unit keeps agorad's state (StateDirectory=): the
 * default of -s when it exists. */
#define AD_STATE_DIR "/var/lib/agorad"
/* return-only mode: agora.conf read again this often */
#define AD_RETRY_CONF_S 30
/* agorad stopping: the loan process has this long to return its loans */
#define AD_LOAN_STOP_S 60

static char def_state[] = AD_STATE_DIR "/agorad.json";
static volatile sig_atomic_t got_hup = 0;
static volatile int stop_flag = 0;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		stop_flag = 1;
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: agorad [-D] [-f agora.conf] [-L logfile] [-P pidfile] [-s statefile] [-v...] [--once]\n"
		"  -D           run in the foreground (agorad never forks away)\n"
		"  -f FILE      agora.conf [beside SLURM_CONF's slurm.conf]\n"
		"  -L FILE      log file [stderr]; SIGHUP reopens it\n"
		"  -P FILE      pid file [none]\n"
		"  -s FILE      state written after each round, read by agoractl fed\n"
		"               [" AD_STATE_DIR
		"/agorad.json if that directory exists]\n"
		"  -v           more verbose (repeat: verbose, debug)\n"
		"  --once       run one round and exit (0: ran, 1: failed)\n"
		"Runs as SlurmUser or root; the federation is the one of SLURM_CONF's\n"
		"cluster, as known to slurmdbd.\n");
	return f == stderr ? 2 : 0;
}

/* The pid file, locked for agorad's life (flock): a second agorad with
 * the same pid file refuses to start, whatever the file says. */
static int pid_fd = -1;

static int pidfile_write(const char *path)
{
	char buf[32];
	int fd, n;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		ad_error("%s: cannot open the pid file: %s", path,
			 strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		n = (int) read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		ad_error("%s: agorad already runs (pid %s holds the lock)",
			 path, buf[0] ? buf : "?");
		close(fd);
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long) getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, n, 0) != n) {
		ad_error("%s: cannot write the pid file: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	pid_fd = fd;
	return 0;
}

static char *default_conf_path(void)
{
	const char *sc = getenv("SLURM_CONF");
	char *copy, *dir, *path;
	size_t len;

	if (!sc || !*sc)
		sc = "/etc/slurm/slurm.conf";
	copy = strdup(sc);
	if (!copy)
		return NULL;
	dir = dirname(copy);
	len = strlen(dir) + sizeof("/agora.conf");
	path = malloc(len);
	if (path)
		snprintf(path, len, "%s/agora.conf", dir);
	free(copy);
	return path;
}

/* Read agora.conf into *conf; on error keep *conf (the last good one). */
static int conf_load(const char *path, agora_conf_t *conf, bool first)
{
	agora_err_t err = { { 0 } };
	agora_conf_t c;

	agora_conf_defaults(&c);
	if (agora_conf_parse_file(path, &c, &err)) {
		agora_conf_free(&c);
		ad_error("%s%s", err.text,
			 first ? "" : "; keeping the previous configuration");
		return -1;
	}
	agora_conf_free(conf);
	*conf = c;
	ad_info("%s: FedAuction=%s FedAuctionInterval=%d s FedAuctionTimeout=%d s FedCatalog=%s",
		path, conf->fed_auction ? "yes" : "no", conf->fed_interval_s,
		conf->fed_auction_timeout_s,
		conf->fed_catalog ? conf->fed_catalog : "(none)");
	if (conf->loaning)
		ad_info("%s: Loaning=yes LoanInterval=%d s LoanHeadroomNodes=%d ReclaimDeadline=%d s ReclaimGrace=%d s MaxRequeuesPerJob=%d LoanElasticGrow=%s LoanGrowMinGain=%d s",
			path, conf->loan_interval_s, conf->loan_headroom,
			conf->reclaim_deadline_s, conf->reclaim_grace_s,
			conf->max_requeues, conf->loan_grow ? "yes" : "no",
			conf->loan_grow_min_gain_s);
	if (conf->loaning)
		ad_info("%s: LoanCheckpointInterval=%d s LoanRestartOverhead=%d s LoanCheckpointWait=%d s%s LoanReclaimAhead=%d s LoanReclaimAheadSigma=%.2f LoanLendHold=%d s",
			path, conf->loan_ckpt_s, conf->loan_restart_s,
			conf->loan_ckpt_wait_s,
			!conf->loan_ckpt_wait_s || conf->loan_headroom >= 2 ? ""
			: conf->loan_ahead_s
				? " (reclaims ahead only: LoanHeadroomNodes < 2)"
				: " (unused: LoanHeadroomNodes < 2)",
			conf->loan_ahead_s, conf->loan_ahead_z,
			conf->loan_lend_hold_s);
	return 0;
}

static double now_s(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* How long the last round's state file stands for the running jobs'
 * GPUs in the metrics (ad_metrics_update): three round periods, at least
 * 120 s; 0 without rounds (FedAuction=no). */
static double state_age_s(const agora_conf_t *conf)
{
	double s = 3.0 * conf->fed_interval_s;

	if (!conf->fed_auction)
		return 0;
	return s > 120 ? s : 120;
}

/* Seconds on CLOCK_MONOTONIC: what the loop schedules and times with, so
 * that a step of the wall clock (an NTP step, an admin's date) neither
 * stalls the rounds until the clock catches up nor runs them back to
 * back.  The wall clock (now_s) is for what is compared with Slurm's
 * times and written down. */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The two jobs of agorad, each in its own process (issue 19 medium 9):
 * the federation's auction, whose round waits on every cluster (up to
 * AD_CHILD_LIMIT_S and a grace per step for one that does not answer),
 * and the loan round on the local cluster, which must meet
 * ReclaimDeadline whatever the federation does. */
enum { AD_ROLE_FED = 1, AD_ROLE_LOAN = 2 };

/* Seconds until the next round of the roles' jobs. */
static double wait_left(const agora_conf_t *conf, unsigned roles,
			double next_fed)
{
	double now = mono_s(), left = 1e9;

	if (roles & AD_ROLE_FED)
		left = next_fed - now;
	if ((roles & AD_ROLE_LOAN) && conf->loaning) {
		double loan = ad_loan_due_in(conf, now);

		if (loan < left)
			left = loan;
	}
	/* 1 s at most: a change of agora.conf (SIGHUP) is seen soon */
	return left < 1 ? left : 1;
}

typedef struct ad_loop {
	const char *conf_path, *state_path;
	agora_conf_t *conf;
	ad_stats_t *st;
	bool once, return_only;
	pid_t loan_pid; /* the loan process, -1 none (the fed process) */
} ad_loop_t;

static pid_t loan_start(ad_loop_t *lp);

/* agorad stops: the loan process returns its loans and ends (SIGTERM,
 * then SIGKILL after AD_LOAN_STOP_S). */
static void loan_stop(ad_loop_t *lp)
{
	double until = mono_s() + AD_LOAN_STOP_S;
	int st;

	if (lp->loan_pid <= 0)
		return;
	kill(lp->loan_pid, SIGTERM);
	while (waitpid(lp->loan_pid, &st, WNOHANG) == 0) {
		if (mono_s() > until) {
			ad_error(
				"the loan process did not end within %d s: killed",
				AD_LOAN_STOP_S);
			kill(lp->loan_pid, SIGKILL);
			(void) waitpid(lp->loan_pid, &st, 0);
			break;
		}
		usleep(100000);
	}
	lp->loan_pid = -1;
}

/* The loan process died (it should not): log and start another. */
static void loan_watch(ad_loop_t *lp)
{
	int st;

	if (lp->loan_pid <= 0 || waitpid(lp->loan_pid, &st, WNOHANG) <= 0)
		return;
	ad_error("the loan process (pid %ld) ended (%s %d): starting another",
		 (long) lp->loan_pid, WIFSIGNALED(st) ? "signal" : "status",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	lp->loan_pid = loan_start(lp);
}

/* The main loop of the roles' jobs until SIGTERM/SIGINT (or one round
 * with --once).  Returns the exit status. */
static int run_loop(ad_loop_t *lp, unsigned roles)
{
	agora_conf_t *conf = lp->conf;
	double next_fed = 0, next_conf = 0, loan_pass_s = 0;
	bool idle_logged = false;
	int rc = 0;

	while (!stop_flag) {
		double t0 = mono_s(), left;
		int n;

		if (roles & AD_ROLE_FED)
			loan_watch(lp);
		/* SIGHUP (systemctl reload signals the main pid): the loan
		 * process re-reads agora.conf and reopens the log too */
		if (got_hup && lp->loan_pid > 0)
			kill(lp->loan_pid, SIGHUP);
		if (lp->return_only) {
			if (got_hup || t0 >= next_conf) {
				got_hup = 0;
				ad_log_reopen();
				next_conf = t0 + AD_RETRY_CONF_S;
				if (!conf_load(lp->conf_path, conf, true)) {
					lp->return_only = false;
					ad_info("%s is valid again: return-only mode ends",
						lp->conf_path);
				}
			}
			if (lp->return_only) {
				usleep(200000);
				continue;
			}
		}
		if (got_hup) {
			got_hup = 0;
			ad_log_reopen();
			(void) conf_load(lp->conf_path, conf, false);
		}
		if (!(roles & AD_ROLE_FED) || t0 < next_fed) {
			/* only the loan round is due */
		} else if (!conf->fed_auction) {
			next_fed = t0 + conf->fed_interval_s;
			if (!idle_logged && !conf->loaning)
				ad_info("FedAuction=no in %s: nothing to do (no job is held)",
					lp->conf_path);
			idle_logged = true;
		} else {
			next_fed = t0 + conf->fed_interval_s;
			idle_logged = false;
			n = ad_round(conf, lp->state_path, lp->st, &stop_flag);
			lp->st->last_round_s = mono_s() - t0;
			/* after a round that pinned jobs the next starts at
			 * once: in a burst, the jobs submitted during its pins
			 * wait for no interval (pol_fed_pace.h) */
			next_fed = mono_s() + pol_fed_round_wait_s(
						      conf->fed_interval_s,
						      lp->st->last_round_s, n);
			rc = n < 0 ? 1 : 0;
		}
		/* the second job: loaning inference nodes (agorad_loan.c) */
		if ((roles & AD_ROLE_LOAN) && conf->loaning) {
			double t_loan = mono_s();

			if (ad_loan_tick(conf, lp->state_path, mono_s(),
					 now_s()))
				rc = 1;
			ad_loan_relaunch(conf, now_s());
			loan_pass_s = mono_s() - t_loan;
		} else if (roles & AD_ROLE_LOAN) {
			/* Loaning=no: no loans, but a grow begun while it was
			 * on still ends (back to its range) */
			ad_loan_follow(conf, lp->state_path, mono_s(), now_s());
		}
		/* metrics (agorad_metrics.c): the fed process serves them; the
		 * loans are read from the loan process' state file */
		if (roles & AD_ROLE_FED) {
			(void) ad_metrics_start(conf->metrics_port);
			ad_metrics_update(lp->state_path, lp->st, loan_pass_s,
					  state_age_s(conf), now_s());
		}
		if (lp->once) {
			if (roles & AD_ROLE_FED)
				ad_round_drain(lp->st, &stop_flag);
			break;
		}
		left = wait_left(conf, roles, next_fed);
		while (left > 0 && !stop_flag && !got_hup) {
			usleep(left > 0.2 ? 200000 : (useconds_t) (left * 1e6));
			left = wait_left(conf, roles, next_fed);
		}
	}
	/* a stop returns the loans: no new borrower lands on them */
	if ((roles & AD_ROLE_LOAN) && !lp->once && !lp->return_only &&
	    conf->loaning && ad_loan_return(conf))
		rc = 1;
	return rc;
}

/* The loan process: the loan round in its own loop, so that a round of
 * the federation that waits on an unreachable cluster never delays a
 * reclaim.  It ends with agorad: on SIGTERM (from the unit, or from the
 * fed process when that one stops) it returns its loans; if the fed
 * process dies without a stop (kill -9, a crash) it is killed as well
 * (PR_SET_PDEATHSIG SIGKILL), so that agorad as a whole is gone and
 * slurmctld's lease brings the loans home, as before the split.  Returns its pid, -1 if it could not start (the loans are
 * then not made; slurmctld's lease returns what was lent). */
static pid_t loan_start(ad_loop_t *lp)
{
	pid_t ppid = getpid(), pid = fork();

	if (pid < 0) {
		ad_error("fork of the loan process: %s: no loaning",
			 strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(0); /* the fed process is gone already */
	lp->loan_pid = -1;
	/* what the fed process holds is not the loans': a restarted loan
	 * process must not keep the metrics port or the pid file's lock */
	ad_metrics_child();
	if (pid_fd >= 0) {
		close(pid_fd);
		pid_fd = -1;
	}
	_exit(run_loop(lp, AD_ROLE_LOAN));
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "once", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *conf_path = NULL, *log_path = NULL, *pid_path = NULL,
	     *state_path = NULL;
	int opt, level = AD_LOG_INFO, rc = 0;
	bool once = false, return_only = false;
	agora_conf_t conf;
	ad_loop_t lp;
	ad_stats_t st = { 0 };
	struct sigaction sa;

	while ((opt = getopt_long(argc, argv, "Df:L:P:s:vhV", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'D':
			break;
		case 'f':
			conf_path = optarg;
			break;
		case 'L':
			log_path = optarg;
			break;
		case 'P':
			pid_path = optarg;
			break;
		case 's':
			state_path = optarg;
			break;
		case 'v':
			level++;
			break;
		case 'O':
			once = true;
			break;
		case 'h':
			return usage(stdout);
		case 'V':
			printf("agorad %s (built against Slurm %d.%d.%d)\n",
			       PACKAGE_VERSION,
			       SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
			       SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
			       SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
			return 0;
		default:
			return usage(stderr);
		}
	}
	if (optind < argc)
		return usage(stderr);
	if (ad_log_open(log_path, level)) {
		fprintf(stderr, "agorad: %s: %s\n", log_path, strerror(errno));
		return 1;
	}
	if (!conf_path && !(conf_path = default_conf_path())) {
		ad_error("out of memory");
		return 1;
	}
	agora_conf_defaults(&conf);
	if (!state_path && !access(AD_STATE_DIR, W_OK))
		state_path = def_state;
	if (conf_load(conf_path, &conf, true)) {
		if (once)
			return 1;
		/* not exit(1): under Restart=on-failure that is a crash loop
		 * that never renews nor returns a loan */
		return_only = true;
		ad_error(
			"%s is invalid: return-only mode: agorad holds no job, lends nothing and renews no loan, so slurmctld returns every loan within LoanLeaseTimeout; %s is read again every %d s and on SIGHUP",
			conf_path, conf_path, AD_RETRY_CONF_S);
	}
	if (pid_path && pidfile_write(pid_path))
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	slurm_init(NULL);
	ad_info("agorad %s started (pid %ld)", PACKAGE_VERSION,
		(long) getpid());
	lp = (ad_loop_t){ .conf_path = conf_path,
			  .state_path = state_path,
			  .conf = &conf,
			  .st = &st,
			  .once = once,
			  .return_only = return_only,
			  .loan_pid = -1 };
	if (once) {
		rc = run_loop(&lp, AD_ROLE_FED | AD_ROLE_LOAN);
	} else {
		lp.loan_pid = loan_start(&lp);
		rc = run_loop(&lp, AD_ROLE_FED);
		loan_stop(&lp);
	}
	ad_info("agorad stopping after %llu rounds: %llu jobs pinned, %llu pins failed",
		(unsigned long long) st.rounds, (unsigned long long) st.pinned,
		(unsigned long long) st.failed);
	ad_round_fini();
	ad_loan_fini();
	ad_metrics_fini();
	slurm_fini();
	if (pid_path && pid_fd >= 0) {
		unlink(pid_path);
		close(pid_fd);
	}
	agora_conf_free(&conf);
	return rc;
}
