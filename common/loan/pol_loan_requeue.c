/*
 * pol_loan_requeue.c - a requeue's signal, grace and limit
 * (pol_loan_requeue.h).
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pol_loan_requeue.h"

bool pol_requeue_allowed(bool requeue, int restarts, int max_requeues)
{
	return requeue && (max_requeues <= 0 || restarts < max_requeues);
}

bool pol_requeue_live(bool running, bool completing, bool has_nodes)
{
	return running && !completing && has_nodes;
}

bool pol_requeue_run_over(bool running, bool completing, bool has_nodes)
{
	return running && !completing && !has_nodes;
}

bool pol_requeue_grow_allowed(bool requeue, int restarts, int max_requeues)
{
	return pol_requeue_allowed(requeue, restarts, max_requeues) &&
	       pol_requeue_allowed(requeue, restarts + 1, max_requeues);
}

int64_t pol_requeue_grace(const pol_requeue_job_t *j,
			  const pol_requeue_conf_t *c)
{
	int64_t g;

	if (!j || !c || j->signal <= 0 || c->grace_s <= 0)
		return 0;
	g = j->signal_time_s < c->grace_s ? j->signal_time_s : c->grace_s;
	return g > 0 ? g : 0;
}

pol_requeue_act_t pol_requeue_next(const pol_requeue_job_t *j,
				   const pol_requeue_conf_t *c, int64_t now,
				   int64_t *at)
{
	pol_requeue_act_t act;
	int64_t grace, end = now;

	if (!j || !c ||
	    !pol_requeue_allowed(j->requeue, j->restarts, c->max_requeues)) {
		act = POL_REQUEUE_NONE;
		goto out;
	}
	grace = pol_requeue_grace(j, c);
	if (!grace) {
		act = POL_REQUEUE_NOW;
		goto out;
	}
	if (j->signaled_at <= 0 || j->signaled_at > now ||
	    (c->stale_s > 0 && now - j->signaled_at >= c->stale_s)) {
		act = POL_REQUEUE_SIGNAL;
		end = now + grace;
		goto out;
	}
	end = j->signaled_at + grace;
	act = now < end ? POL_REQUEUE_WAIT : POL_REQUEUE_NOW;
	if (act == POL_REQUEUE_NOW)
		end = now;
out:
	if (at)
		*at = end;
	return act;
}

const char *pol_requeue_act_name(pol_requeue_act_t act)
{
	switch (act) {
	case POL_REQUEUE_NONE:
		return "none";
	case POL_REQUEUE_SIGNAL:
		return "signal";
	case POL_REQUEUE_WAIT:
		return "wait";
	case POL_REQUEUE_NOW:
		return "now";
	}
	return "?";
}

/* Slurm's signals_mapping (src/common/proc_args.c), the names --signal
 * takes */
static const struct {
	const char *name;
	int sig;
} sig_names[] = {
	{ "HUP", SIGHUP },   { "INT", SIGINT },   { "QUIT", SIGQUIT },
	{ "ABRT", SIGABRT }, { "KILL", SIGKILL }, { "ALRM", SIGALRM },
	{ "TERM", SIGTERM }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
	{ "URG", SIGURG },   { "CONT", SIGCONT }, { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "XCPU", SIGXCPU },
};

/* One --signal argument, [R][B][R]:SIG[@TIME], of length n. */
static int signal_arg(const char *a, size_t n, int *sig, int *time_s,
		      bool *batch)
{
	char buf[64], *at, *end;
	const char *p;
	long v;

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, a, n);
	buf[n] = '\0';
	p = buf;
	*batch = false;
	if (toupper((unsigned char) *p) == 'R')
		p++;
	if (toupper((unsigned char) *p) == 'B') {
		*batch = true;
		p++;
	}
	if (toupper((unsigned char) *p) == 'R')
		p++;
	if (*p == ':')
		p++;
	else if (p != buf)
		return -1; /* "B" etc. without ':' is a name: none fits */
	*time_s = 60;
	if ((at = strchr(p, '@'))) {
		*at++ = '\0';
		errno = 0;
		v = strtol(at, &end, 10);
		if (end == at || *end || errno || v < 0 || v > 0xffff)
			return -1;
		*time_s = (int) v;
	}
	errno = 0;
	v = strtol(p, &end, 10);
	if (end != p) {
		if (*end || errno || v < 1 || v > 0xffff)
			return -1;
		*sig = (int) v;
		return 0;
	}
	if (!strncasecmp(p, "SIG", 3))
		p += 3;
	for (size_t i = 0; i < sizeof(sig_names) / sizeof(sig_names[0]); i++)
		if (!strcasecmp(p, sig_names[i].name)) {
			*sig = sig_names[i].sig;
			return 0;
		}
	return -1;
}

/* The next whitespace-separated word of *p (quotes stripped at its ends);
 * its length, 0 at the end of the line. */
static size_t next_word(const char **p, const char **w)
{
	const char *s = *p;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	*w = s;
	while (s[0] && s[0] != ' ' && s[0] != '\t' && s[0] != '\n')
		s++;
	n = (size_t) (s - *w);
	*p = s;
	if (n >= 2 && (**w == '"' || **w == '\'') && (*w)[n - 1] == **w) {
		(*w)++;
		n -= 2;
	}
	return n;
}

int pol_requeue_signal_parse(const char *script, int *sig, int *time_s,
			     bool *batch)
{
	static const char opt[] = "--signal";
	const size_t ol = sizeof(opt) - 1;
	bool found = false, bad = false;
	const char *line = script;

	*sig = 0;
	*time_s = 0;
	*batch = false;
	while (line && *line) {
		const char *next = strchr(line, '\n'), *p = line, *w;
		size_t n;

		next = next ? next + 1 : NULL;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (strncmp(line, "#SBATCH", 7)) {
			/* sbatch stops at the first line that is not a
			 * comment or blank */
			if (*p && *p != '\n' && *p != '#')
				break;
			line = next;
			continue;
		}
		p = line + 7;
		while ((n = next_word(&p, &w))) {
			const char *arg = NULL;
			size_t an = 0;
			int s, t;
			bool b;

			if (n > ol && !strncmp(w, opt, ol) && w[ol] == '=') {
				arg = w + ol + 1;
				an = n - ol - 1;
			} else if (n == ol && !strncmp(w, opt, ol)) {
				an = next_word(&p, &arg);
			} else
				continue;
			if (signal_arg(arg, an, &s, &t, &b)) {
				bad = true;
				continue;
			}
			bad = false;
			found = true;
			*sig = s;
			*time_s = t;
			*batch = b;
		}
		line = next;
	}
	if (bad) {
		*sig = 0;
		errno = EINVAL;
		return -1;
	}
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}
