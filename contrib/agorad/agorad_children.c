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
#include <unistd.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agorad_round_int.h"

/* Run fn(c, fd) in one child per cluster with want[c]; collect what each
 * wrote into out[c] (malloc'ed) / len[c].  Children past the limit, or
 * still running AD_STOP_GRACE_S after *stop was set, get SIGTERM (a pins
 * child finishes the job in hand), then SIGKILL AD_STOP_GRACE_S later;
 * what a killed child wrote is dropped. */
void run_children(const ad_round_t *r, const bool *want, child_fn fn,
		  char **out, size_t *len, int limit_s, volatile int *stop)
{
	pid_t pid[AD_MAX_CLUSTERS];
	int fd[AD_MAX_CLUSTERS], open_n = 0;
	size_t cap[AD_MAX_CLUSTERS];
	double deadline = ad_now_s() + limit_s;
	bool termed = false, stop_seen = false;

	for (int c = 0; c < r->n_clusters; c++) {
		int p[2];

		pid[c] = -1;
		fd[c] = -1;
		out[c] = NULL;
		len[c] = cap[c] = 0;
		if (!want[c])
			continue;
		if (pipe(p)) {
			ad_error("pipe: %s", strerror(errno));
			continue;
		}
		pid[c] = fork();
		if (pid[c] < 0) {
			ad_error("fork: %s", strerror(errno));
			close(p[0]);
			close(p[1]);
			continue;
		}
		if (pid[c] == 0) {
			close(p[0]);
			for (int o = 0; o < c; o++)
				if (fd[o] >= 0)
					close(fd[o]);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGHUP, SIG_IGN);
			working_cluster_rec = r->clusters[c].rec;
			fn(r, c, p[1]);
			close(p[1]);
			_exit(0);
		}
		close(p[1]);
		fd[c] = p[0];
		open_n++;
	}
	while (open_n > 0) {
		struct pollfd pfd[AD_MAX_CLUSTERS];
		int map[AD_MAX_CLUSTERS], n = 0, ms;

		for (int c = 0; c < r->n_clusters; c++)
			if (fd[c] >= 0) {
				pfd[n].fd = fd[c];
				pfd[n].events = POLLIN;
				pfd[n].revents = 0;
				map[n++] = c;
			}
		if (stop && *stop && !stop_seen) {
			stop_seen = true;
			if (deadline > ad_now_s() + AD_STOP_GRACE_S)
				deadline = ad_now_s() + AD_STOP_GRACE_S;
		}
		ms = (int) ((deadline - ad_now_s()) * 1000);
		if (ms < 0)
			ms = 0;
		if ((ms == 0 || poll(pfd, n, ms) == 0) && !termed) {
			/* first SIGTERM: a pins child ends the job in hand */
			for (int i = 0; i < n; i++)
				kill(pid[map[i]], SIGTERM);
			termed = true;
			deadline = ad_now_s() + AD_STOP_GRACE_S;
			continue;
		}
		if (ms == 0 && termed) {
			for (int i = 0; i < n; i++) {
				int c = map[i];

				ad_error(
					"%s: no answer within %d s: counted as down this round",
					r->clusters[c].name, limit_s);
				kill(pid[c], SIGKILL);
				close(fd[c]);
				fd[c] = -1;
				free(out[c]);
				out[c] = NULL;
				len[c] = 0;
				open_n--;
			}
			break;
		}
		for (int i = 0; i < n; i++) {
			int c = map[i];
			ssize_t got;

			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (cap[c] - len[c] < 65536) {
				char *nb;

				cap[c] = cap[c] ? cap[c] * 2 : 131072;
				nb = realloc(out[c], cap[c]);
				if (!nb) {
					ad_error("out of memory");
					exit(1);
				}
				out[c] = nb;
			}
			got = read(fd[c], out[c] + len[c], cap[c] - len[c]);
			if (got > 0) {
				len[c] += got;
			} else if (got == 0 || errno != EINTR) {
				close(fd[c]);
				fd[c] = -1;
				open_n--;
			}
		}
	}
	for (int c = 0; c < r->n_clusters; c++)
		if (pid[c] > 0)
			while (waitpid(pid[c], NULL, 0) < 0 && errno == EINTR)
				;
}
