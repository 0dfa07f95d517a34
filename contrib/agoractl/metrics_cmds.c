/*
 * metrics_cmds.c - agoractl metrics [--out FILE] [--state FILE]
 *
 * Agora's metrics in Prometheus' text format (common/base/agora_prom.h):
 * the per-account gauges and the leases of the view slurmctld publishes
 * (what agoractl credits and leases show), then agorad's own metrics
 * (auction rounds, bids, pins, loans, reclaims, pass times: the text
 * agorad writes beside its -s state file after each round, X.json ->
 * X.prom, the same text its MetricsPort serves).  --state names agorad's
 * -s file (default $AGORAD_STATE, else /var/lib/agorad/agorad.json, as
 * agoractl fed).
 *
 * --out FILE writes FILE atomically (FILE.tmp, fsync, rename, mode 0644)
 * for node_exporter's textfile collector, which reads *.prom files of
 * its --collector.textfile.directory; without --out the text goes to
 * standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ac_out.h"
#include "agora_file.h"
#include "agora_prom.h"
#include "metrics_cmds.h"

/* agorad's -s file -> its metrics file */
static char *prom_path(const char *opt)
{
	const char *e = getenv("AGORAD_STATE");

	return agora_prom_state_path(
		opt ? opt : (e && *e ? e : "/var/lib/agorad/agorad.json"));
}

/* FILE.tmp, fsync, rename: a reader sees the old or the new file. */
static int write_file(const char *path, const char *text)
{
	size_t n = strlen(path) + sizeof(".tmp"), len = strlen(text);
	char *tmp = malloc(n);
	int fd = -1, rc = -1;

	if (!tmp)
		return -1;
	snprintf(tmp, n, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0 || fchmod(fd, 0644) ||
	    write(fd, text, len) != (ssize_t) len || fsync(fd)) {
		ac_err("%s: %s", tmp, strerror(errno));
	} else if (close(fd)) {
		fd = -1;
		ac_err("%s: %s", tmp, strerror(errno));
	} else {
		fd = -1;
		if (rename(tmp, path))
			ac_err("%s: %s", path, strerror(errno));
		else
			rc = 0;
	}
	if (fd >= 0)
		close(fd);
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int agoractl_metrics_main(int argc, char **argv, const agora_view_t *v)
{
	const char *out = NULL, *sopt = NULL, *text;
	agora_err_t err = { { 0 } };
	agora_prom_t p;
	char *path, *ad = NULL;
	size_t len = 0;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			sopt = argv[++i];
		} else {
			fprintf(stderr,
				"usage: agoractl metrics [--out FILE] [--state FILE]\n");
			return 2;
		}
	}
	agora_prom_init(&p);
	agora_prom_one(&p, "agora_view_up", "gauge",
		       "1 if slurmctld's Agora view was read, else 0",
		       v ? 1 : 0);
	if (v)
		agora_prom_view(&p, v->apps, v->n_apps, v->leases, v->n_leases);
	if (!(path = prom_path(sopt))) {
		agora_prom_free(&p);
		return 1;
	}
	if (agora_file_read_ex(path, 16 << 20, AGORA_FILE_FOLLOW, &ad, &len,
			       NULL, &err) < 0) {
		ac_warn("agorad's metrics: %s (is agorad running with -s?)",
			err.text);
	}
	if (!(text = agora_prom_text(&p))) {
		ac_err("metrics: %s", p.err);
		rc = 1;
	} else {
		size_t n = strlen(text) + len + 1;
		char *all = malloc(n);

		if (!all) {
			rc = 1;
		} else {
			snprintf(all, n, "%s%s", text, ad ? ad : "");
			if (out)
				rc = write_file(out, all) ? 1 : 0;
			else
				fputs(all, stdout);
			if (ac_json) {
				json_object *o = json_object_new_object();

				json_object_object_add(
					o, "file", out ? ac_str(out) : NULL);
				json_object_object_add(o, "agorad_file",
						       ac_str(path));
				json_object_object_add(o, "text", ac_str(all));
				ac_add("metrics", o);
			}
			free(all);
		}
	}
	free(ad);
	free(path);
	agora_prom_free(&p);
	return rc;
}
