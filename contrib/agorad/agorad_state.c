/*
 * agorad_state.c - the state file agoractl fed / explain read: the
 * round's clusters and the decision of each held job, written to X.new
 * (0600), fsynced and renamed over X; a write that failed anywhere (a
 * full disk) leaves X as it was.  Not the core's writer: its .prev link
 * and directory fsync on every round cost the round loop time it spends
 * elsewhere, and this file is a cache (agorad(8)).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agorad_round_int.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char) *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* An up cluster's running GPUs per account, as its survey answer of
 * this round (cl->survey: read now, merged, or standing in for a late
 * one) tells them, for the metrics. */
static void running_gpus(FILE *f, const ad_cluster_t *cl)
{
	const ad_survey_hdr_t *h = (const ad_survey_hdr_t *) cl->survey;

	if (!h || cl->survey_len < sizeof(*h) || h->jp.n_acct < 0 ||
	    h->jp.n_acct > AD_ACCT_MAX)
		return;
	fprintf(f, ",\"running_gpus\":{");
	for (int a = 0; a < h->jp.n_acct; a++) {
		char name[sizeof(h->jp.acct[a].account)];

		memcpy(name, h->jp.acct[a].account, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		fprintf(f, "%s", a ? "," : "");
		json_str(f, name);
		fprintf(f, ":%d", h->jp.acct[a].gpus);
	}
	fputc('}', f);
}

void write_state(const ad_round_t *r, const char *path, time_t now, double secs,
		 const int *pinned_rc)
{
	char tmp[4096];
	FILE *f;
	int fd, bad;

	if (!path)
		return;
	if ((size_t) snprintf(tmp, sizeof(tmp), "%s.new", path) >=
	    sizeof(tmp)) {
		ad_error("%s: path too long: no state written", path);
		return;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 || fchmod(fd, 0600) || !(f = fdopen(fd, "w"))) {
		ad_error("%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return;
	}
	fprintf(f, "{\"time\":%ld,\"round_s\":%.3f,\"federation\":", (long) now,
		secs);
	json_str(f, r->fed_name);
	fprintf(f, ",\"clusters\":[");
	for (int c = 0; c < r->n_clusters; c++) {
		fprintf(f, "%s{\"name\":", c ? "," : "");
		json_str(f, r->clusters[c].name);
		fprintf(f,
			",\"up\":%s,\"nodes\":%d,\"gpus_total\":%d,\"gpus_free\":%d,\"gpus_pending\":%d",
			r->clusters[c].up ? "true" : "false",
			r->clusters[c].n_nodes, r->clusters[c].gpus_total,
			r->clusters[c].gpus_free, r->clusters[c].gpus_pending);
		if (r->clusters[c].up)
			running_gpus(f, &r->clusters[c]);
		fputc('}', f);
	}
	fprintf(f, "],\"jobs\":[");
	for (int i = 0; i < r->n_jobs; i++) {
		fprintf(f, "%s{\"job_id\":%u,\"origin\":", i ? "," : "",
			r->jobs[i].job_id);
		json_str(f, r->jobs[i].origin);
		fprintf(f, ",\"winner\":");
		json_str(f, r->winner_cluster[i] >= 0
				    ? r->clusters[r->winner_cluster[i]].name
				    : r->jobs[i].pin_cluster);
		fprintf(f, ",\"pinned\":%s,\"pinning\":%s,\"decision\":",
			pinned_rc && pinned_rc[i] == 0 ? "true" : "false",
			pinned_rc && pinned_rc[i] == 1 ? "true" : "false");
		json_str(f, r->decision[i]);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	bad = ferror(f) || fflush(f) || fsync(fileno(f));
	if (fclose(f) || bad) {
		ad_error("%s: not written: %s", path, strerror(errno));
		unlink(tmp);
		return;
	}
	if (rename(tmp, path))
		ad_error("%s: %s", path, strerror(errno));
}
