/*
 * agorad_loan_demand.c - the loan round's inference demand (nodes), from
 * LoanDemandSource: the jobs the snapshot counted, a file, or a command
 * (run without a shell, with a minimal environment and a time limit: an
 * exit status 127 is a program that could not be run).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agora_argv.h"
#include "agora_file.h"
#include "agorad.h"
#include "agorad_loan.h"

/* ---- the demand ----------------------------------------------------- */

static double parse_demand(const char *text, const char *what)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(text, &end);
	if (errno || end == text || !isfinite(d) || d < 0) {
		ad_error("loan: %s: '%.32s' is not a number of nodes >= 0",
			 what, text);
		return -1;
	}
	return d;
}

/* A demand command that does not answer within this is killed and the
 * demand is unknown (every inference node goes home): a hung command must
 * not stop the loan round. */
#define LN_DEMAND_CMD_TIMEOUT_MS 10000

static int64_t ln_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read the child's first line from fd until EOF or the deadline; 0, or
 * -1 on timeout. */
static int demand_read(int fd, char *line, size_t size, int64_t deadline)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - ln_now_ms();
		ssize_t r;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int) left) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!p.revents)
			continue;
		r = read(fd, line + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t) r;
	}
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/* Wait for the child until the deadline, then kill its process group. */
static int demand_reap(pid_t pid, int64_t deadline, bool kill_now)
{
	int st = 0;

	while (!kill_now && ln_now_ms() < deadline) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/* The environment of a demand command: a fixed PATH for what it runs
 * itself, the C locale, and SLURM_CONF (so that it may ask Slurm); none
 * of agorad's own. */
static void demand_env(char *env[4], char *slurm_conf, size_t size)
{
	static char path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		    lang[] = "LANG=C";
	const char *sc = getenv("SLURM_CONF");
	int n = 0;

	env[n++] = path;
	env[n++] = lang;
	if (sc && *sc &&
	    snprintf(slurm_conf, size, "SLURM_CONF=%s", sc) < (int) size)
		env[n++] = slurm_conf;
	env[n] = NULL;
}

/* The command of LoanDemandSource=command: split into words and run with
 * execve, without a shell and with demand_env's environment only (no
 * word of it is expanded: agora_argv.h), its stdin /dev/null, killed
 * (its whole process group) after LN_DEMAND_CMD_TIMEOUT_MS. */
static double demand_command(const char *cmd)
{
	char line[256] = "", slurm_conf[4096], *env[4], **argv = NULL;
	int fds[2], st, rd;
	int64_t deadline = ln_now_ms() + LN_DEMAND_CMD_TIMEOUT_MS;
	agora_err_t err = { { 0 } };
	pid_t pid;

	if (agora_argv_split(cmd, "LoanDemandSource command", &argv, &err) <
	    0) {
		ad_error("loan: %s",
			 errno == ENOMEM ? "out of memory" : err.text);
		return -1;
	}
	demand_env(env, slurm_conf, sizeof(slurm_conf));
	if (pipe(fds) < 0) {
		ad_error("loan: LoanDemandSource command:%s: %s", cmd,
			 strerror(errno));
		free(argv);
		return -1;
	}
	if ((pid = fork()) < 0) {
		/* the pipe's ends too: this runs every LoanInterval */
		ad_error("loan: LoanDemandSource command:%s: %s", cmd,
			 strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(argv);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		(void) setpgid(0, 0);
		if (null >= 0)
			(void) dup2(null, STDIN_FILENO);
		(void) dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(argv);
	(void) setpgid(pid, pid);
	close(fds[1]);
	rd = demand_read(fds[0], line, sizeof(line), deadline);
	close(fds[0]);
	st = demand_reap(pid, deadline, rd < 0);
	if (rd < 0 || st == -1) {
		ad_error(
			"loan: LoanDemandSource command:%s: no answer within %d s; killed, demand unknown",
			cmd, LN_DEMAND_CMD_TIMEOUT_MS / 1000);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		ad_error("loan: LoanDemandSource command:%s: exit status %d",
			 cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	return parse_demand(line, "LoanDemandSource command");
}

double ln_demand(const agora_conf_t *conf, const ln_snap_t *s)
{
	agora_err_t err = { { 0 } };
	char *text = NULL;
	size_t len = 0;
	double d;

	switch (conf->loan_demand_kind) {
	case AGORA_DEMAND_JOBS:
		return s->infer_job_nodes;
	case AGORA_DEMAND_COMMAND:
		return demand_command(conf->loan_demand_arg);
	case AGORA_DEMAND_FILE:
		break;
	}
	if (agora_file_read_ex(conf->loan_demand_arg, 4096, AGORA_FILE_FOLLOW,
			       &text, &len, NULL, &err) < 0) {
		ad_error("loan: LoanDemandSource: %s", err.text);
		return -1;
	}
	d = parse_demand(text, conf->loan_demand_arg);
	free(text);
	return d;
}
