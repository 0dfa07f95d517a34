/*
 * agorad_log.c - logging the way Slurm daemons do: a timestamped line per
 * message ("[2024-05-01T12:00:00.123] error: ..."), levels error, info,
 * verbose, debug, a log file opened in append mode (so several processes
 * of agorad write whole lines), reopened on SIGHUP for log rotation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "agorad.h"

static int log_fd = STDERR_FILENO;
static char *log_path = NULL;
static int log_level = AD_LOG_INFO;

int ad_log_open(const char *path, int level)
{
	int fd;

	log_level = level;
	if (!path)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return -1;
	free(log_path);
	log_path = strdup(path);
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = fd;
	return 0;
}

void ad_log_reopen(void)
{
	int fd;

	if (!log_path)
		return;
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0) {
		ad_error("cannot reopen log file %s: %s; keeping the old one",
			 log_path, strerror(errno));
		return;
	}
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = fd;
	ad_info("log file reopened");
}

void ad_log(int level, const char *fmt, ...)
{
	char line[4096], ts[64];
	struct timeval tv;
	struct tm tm;
	va_list ap;
	int n, m;
	const char *tag = level == AD_LOG_ERROR   ? "error: "
			  : level == AD_LOG_DEBUG ? "debug: "
						  : "";

	if (level > log_level)
		return;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "[%s.%03ld] %s", ts,
		     (long) tv.tv_usec / 1000, tag);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int) sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line: whole lines even with several writers */
	if (write(log_fd, line, n) < 0) {
		/* nowhere left to report it */
	}
}
