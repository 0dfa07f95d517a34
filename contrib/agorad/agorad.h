/*
 * agorad.h - the federation helper's internal interfaces.
 *
 * agorad.c        options, configuration, pid file, signals, the loop
 * agorad_log.c    logging the way Slurm daemons do (levels, file, SIGHUP)
 * agorad_round.c  one auction round: survey, plans, auction, pins
 *                (with agorad_survey.c, agorad_auction.c)
 */
#ifndef AGORAD_H
#define AGORAD_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "agora_conf.h"

/* ---- logging ---- */
enum { AD_LOG_ERROR = 1, AD_LOG_INFO, AD_LOG_VERBOSE, AD_LOG_DEBUG };
/* path NULL: stderr.  Returns 0, or -1 with errno (file not writable). */
int ad_log_open(const char *path, int level);
/* Reopen the file (after SIGHUP, e.g. logrotate). */
void ad_log_reopen(void);
void ad_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define ad_error(...)   ad_log(AD_LOG_ERROR, __VA_ARGS__)
#define ad_info(...)    ad_log(AD_LOG_INFO, __VA_ARGS__)
#define ad_verbose(...) ad_log(AD_LOG_VERBOSE, __VA_ARGS__)
#define ad_debug(...)   ad_log(AD_LOG_DEBUG, __VA_ARGS__)

/* ---- the round ---- */
typedef struct ad_stats {
	uint64_t rounds, pinned, failed, no_plan;
	/* surveys whose job table had not changed (the last one reused) */
	uint64_t survey_same;
	double last_round_s;
} ad_stats_t;

/* One round over the whole federation: every job held for the auction
 * is decided.  conf: agora.conf in force; state_path: where the round's
 * view is written for agoractl (NULL: none).  Returns the number of
 * jobs pinned (with AD_PINS_OVERLAP: whose pins it started, plus those
 * the pins of earlier rounds pinned), -1 if the federation could not be
 * read. */
int ad_round(const agora_conf_t *conf, const char *state_path, ad_stats_t *st,
	     volatile int *stop);
/* Waits for the pins still in flight (--once: before the exit). */
void ad_round_drain(ad_stats_t *st, volatile int *stop);
void ad_round_fini(void);

/* ---- metrics (agorad_metrics.c) ---- */
/* Serve /metrics on port (0: stop serving); a port already served is
 * kept.  0, or -1 after a message (agorad goes on without). */
int ad_metrics_start(int port);
void ad_metrics_stop(void);
/* In a process just forked from one that serves: close the listening
 * socket it inherited (the thread is the parent's), so a port the parent
 * stops serving is not kept open, unanswered, by the child. */
void ad_metrics_child(void);
/* After a turn of the loop: counters, X.prom beside the state file and
 * the text served. */
void ad_metrics_update(const char *state_path, const ad_stats_t *st,
		       double loan_pass_s, double state_max_age_s, double now);
void ad_metrics_fini(void);

#endif
