/*
 * agorad_children.c - the process machinery of steps 1, 2 and 4: one
 * child per cluster (libslurm's target cluster, working_cluster_rec, is
 * process-global), answers through pipes in fixed-size records, limits
 * and the stop (SIGTERM, then SIGKILL).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "pol_fed_pace.h"

#include "agorad_round_int.h"

void children_start(const ad_round_t *r, const bool *want, child_fn fn,
		    int limit_s, ad_children_t *ch)
{
	memset(ch, 0, sizeof(*ch));
	ch->n = r->n_clusters;
	ch->limit_s = limit_s;
	ch->deadline = ad_now_s() + limit_s;
	for (int c = 0; c < r->n_clusters; c++) {
		int p[2];

		ch->pid[c] = -1;
		ch->fd[c] = -1;
		scopy(ch->name[c], r->clusters[c].name, AD_NAME);
		if (!want[c])
			continue;
		if (pipe(p)) {
			ad_error("pipe: %s", strerror(errno));
			continue;
		}
		ch->pid[c] = fork();
		if (ch->pid[c] < 0) {
			ad_error("fork: %s", strerror(errno));
			close(p[0]);
			close(p[1]);
			continue;
		}
		if (ch->pid[c] == 0) {
			close(p[0]);
			/* (the read ends of a pins step still running are
			 * inherited too, unused: their writers are theirs) */
			for (int o = 0; o < c; o++)
				if (ch->fd[o] >= 0)
					close(ch->fd[o]);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGHUP, SIG_IGN);
			working_cluster_rec = r->clusters[c].rec;
			fn(r, c, p[1]);
			close(p[1]);
			_exit(0);
		}
		close(p[1]);
		ch->fd[c] = p[0];
		ch->open_n++;
	}
}

bool children_collect(ad_children_t *ch, bool wait, volatile int *stop)
{
	while (ch->open_n > 0) {
		struct pollfd pfd[AD_MAX_CLUSTERS];
		int map[AD_MAX_CLUSTERS], n = 0, ms, got_n;

		for (int c = 0; c < ch->n; c++)
			if (ch->fd[c] >= 0) {
				pfd[n].fd = ch->fd[c];
				pfd[n].events = POLLIN;
				pfd[n].revents = 0;
				map[n++] = c;
			}
		if (stop && *stop && !ch->stop_seen) {
			ch->stop_seen = true;
			if (ch->deadline > ad_now_s() + AD_STOP_GRACE_S)
				ch->deadline = ad_now_s() + AD_STOP_GRACE_S;
		}
		ms = (int) ((ch->deadline - ad_now_s()) * 1000);
		if (ms < 0)
			ms = 0;
		got_n = ms == 0 ? 0 : poll(pfd, n, wait ? ms : 0);
		if (got_n == 0 && ms > 0 && !wait)
			return false; /* nothing yet; not past the limit */
		if (got_n == 0 && !ch->termed) {
			/* first SIGTERM: a pins child ends the job in hand */
			for (int i = 0; i < n; i++)
				kill(ch->pid[map[i]], SIGTERM);
			ch->termed = true;
			ch->deadline = ad_now_s() + AD_STOP_GRACE_S;
			continue;
		}
		if (ms == 0 && ch->termed) {
			for (int i = 0; i < n; i++) {
				int c = map[i];

				ad_error(
					"%s: no answer within %d s: counted as down this round",
					ch->name[c], ch->limit_s);
				kill(ch->pid[c], SIGKILL);
				close(ch->fd[c]);
				ch->fd[c] = -1;
				free(ch->out[c]);
				ch->out[c] = NULL;
				ch->len[c] = 0;
				ch->open_n--;
			}
			break;
		}
		for (int i = 0; i < n; i++) {
			int c = map[i];
			ssize_t got;

			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (ch->cap[c] - ch->len[c] < 65536) {
				char *nb;

				ch->cap[c] = ch->cap[c] ? ch->cap[c] * 2
							: 131072;
				nb = realloc(ch->out[c], ch->cap[c]);
				if (!nb) {
					ad_error("out of memory");
					exit(1);
				}
				ch->out[c] = nb;
			}
			got = read(ch->fd[c], ch->out[c] + ch->len[c],
				   ch->cap[c] - ch->len[c]);
			if (got > 0) {
				ch->len[c] += got;
			} else if (got == 0 || errno != EINTR) {
				close(ch->fd[c]);
				ch->fd[c] = -1;
				ch->open_n--;
			}
		}
	}
	for (int c = 0; c < ch->n; c++)
		if (ch->pid[c] > 0) {
			while (waitpid(ch->pid[c], NULL, 0) < 0 &&
			       errno == EINTR)
				;
			ch->pid[c] = -1;
		}
	return true;
}

/* Run fn(c, fd) in one child per cluster with want[c]; collect what each
 * wrote into out[c] (malloc'ed) / len[c].  Children past the limit, or
 * still running AD_STOP_GRACE_S after *stop was set, get SIGTERM (a pins
 * child finishes the job in hand), then SIGKILL AD_STOP_GRACE_S later;
 * what a killed child wrote is dropped. */
void run_children(const ad_round_t *r, const bool *want, child_fn fn,
		  char **out, size_t *len, int limit_s, volatile int *stop)
{
	ad_children_t ch;

	children_start(r, want, fn, limit_s, &ch);
	(void) children_collect(&ch, true, stop);
	for (int c = 0; c < r->n_clusters; c++) {
		out[c] = ch.out[c];
		len[c] = ch.len[c];
	}
}

void late_child_end(ad_held_child_t *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(h->fd);
	}
	free(h->out);
	memset(h, 0, sizeof(*h));
}

void run_children_late(ad_round_t *r, const bool *want, child_fn fn,
		       const ad_late_t *lt, double grace_s, double max_age_s,
		       char **out, size_t *len, bool *late, double *started,
		       int limit_s, volatile int *stop)
{
	ad_children_t ch;
	bool fork_c[AD_MAX_CLUSTERS];
	double first_at = -1, t0 = ad_now_s(), end_at[AD_MAX_CLUSTERS];

	/* a child given up in an earlier round is this round's for its
	 * cluster (one not wanted now, skipped for a while, ends) */
	for (int c = 0; c < r->n_clusters; c++) {
		ad_held_child_t *h = &r->clusters[c].late_child;

		if (h->pid > 0 && !want[c])
			late_child_end(h);
		fork_c[c] = want[c] && h->pid <= 0;
	}
	children_start(r, fork_c, fn, limit_s, &ch);
	for (int c = 0; c < ch.n; c++) {
		ad_held_child_t *h = &r->clusters[c].late_child;

		end_at[c] = -1;
		started[c] = t0;
		if (h->pid <= 0)
			continue;
		ch.pid[c] = h->pid;
		ch.fd[c] = h->fd;
		ch.out[c] = h->out;
		ch.len[c] = h->len;
		ch.cap[c] = h->cap;
		ch.open_n++;
		started[c] = h->started;
		memset(h, 0, sizeof(*h));
	}
	memset(late, 0, r->n_clusters * sizeof(*late));
	/* until every child ended, or those still reading may be given up
	 * (pol_fed_survey_late): then each reads on as its cluster's
	 * late_child (the next round's child there) and late[c] is set */
	while (ch.open_n > 0) {
		int open_n = ch.open_n, n_late = 0;
		double now;

		if (children_collect(&ch, false, stop))
			break;
		now = ad_now_s();
		for (int c = 0; c < ch.n; c++)
			if (want[c] && ch.fd[c] < 0 && end_at[c] < 0) {
				end_at[c] = now;
				if (first_at < 0)
					first_at = now;
			}
		for (int c = 0; c < ch.n; c++)
			if (ch.fd[c] >= 0 &&
			    pol_fed_survey_late(now, first_at, lt[c].kept_at,
						lt[c].pins_on_way,
						lt[c].was_late, grace_s,
						max_age_s))
				n_late++;
		if (n_late && n_late == ch.open_n) {
			for (int c = 0; c < ch.n; c++) {
				ad_held_child_t *h = &r->clusters[c].late_child;

				if (ch.fd[c] < 0)
					continue;
				*h = (ad_held_child_t){ .pid = ch.pid[c],
							.fd = ch.fd[c],
							.out = ch.out[c],
							.len = ch.len[c],
							.cap = ch.cap[c],
							.started = started[c] };
				ch.pid[c] = -1;
				ch.fd[c] = -1;
				ch.out[c] = NULL;
				ch.len[c] = 0;
				ch.cap[c] = 0;
				ch.open_n--;
				late[c] = true;
			}
			break;
		}
		if (ch.open_n == open_n) {
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	(void) children_collect(&ch, true, stop);
	for (int c = 0; c < r->n_clusters; c++) {
		out[c] = ch.out[c];
		len[c] = ch.len[c];
		if (want[c])
			ad_debug(
				"%s: survey %s in %.3f s (its last answer %.1f s old, %d pins on their way)",
				ch.name[c], late[c] ? "given up" : "answered",
				(end_at[c] >= 0 ? end_at[c] : ad_now_s()) -
					started[c],
				lt[c].kept_at >= 0 ? t0 - lt[c].kept_at : -1.0,
				lt[c].pins_on_way);
	}
}
