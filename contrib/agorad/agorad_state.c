/*
 * agorad_state.c - the state file agoractl fed / explain read: the
 * round's clusters and the decision of each held job, formatted in
 * memory and written with the core's writer (agora_file_write_atomic:
 * 0600, fsync, atomic rename, the previous copy kept as .prev), so a
 * failed write never replaces a good file with a cut one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agora_file.h"
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
	agora_err_t err = { { 0 } };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int bad;

	if (!path)
		return;
	if (!(f = open_memstream(&text, &len))) {
		ad_error("%s: %s", path, strerror(errno));
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
	bad = ferror(f);
	if (fclose(f) || bad) {
		ad_error("%s: not written: out of memory", path);
		free(text);
		return;
	}
	if (agora_file_write_atomic(path, text, len, &err))
		ad_error("%s", err.text);
	free(text);
}
