/*
 * ac_out.c - agoractl's text or --json output (ac_out.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agora_config.h"

#include <slurm/slurm.h>

#include "ac_out.h"
#include "agora_prom.h"

bool ac_json = false;
static json_object *doc;
static int json_fd = -1;

int ac_out_init(int *argc, char **argv)
{
	int j = 1;

	for (int i = 1; i < *argc; i++)
		if (!strcmp(argv[i], "--json"))
			ac_json = true;
	if (!ac_json)
		return 0;
	doc = agora_json_doc(PACKAGE_VERSION,
			     SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
			     SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
			     SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER), *argc,
			     (const char *const *) argv);
	for (int i = 1; i < *argc; i++)
		if (strcmp(argv[i], "--json"))
			argv[j++] = argv[i];
	argv[j] = NULL;
	*argc = j;
	/* the text goes nowhere, the document to the real stdout */
	fflush(stdout);
	if (!doc || (json_fd = dup(STDOUT_FILENO)) < 0 ||
	    !freopen("/dev/null", "w", stdout)) {
		fprintf(stderr, "agoractl: --json: cannot set up the output\n");
		return -1;
	}
	return 0;
}

void ac_add(const char *key, json_object *v)
{
	if (doc)
		json_object_object_add(doc, key, v);
	else
		json_object_put(v);
}

static void record(bool warning, const char *fmt, va_list ap)
{
	char buf[2048];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	fprintf(stderr, "agoractl: %s\n", buf);
	agora_json_doc_error(doc, warning, warning ? 0 : 1, buf);
}

void ac_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(false, fmt, ap);
	va_end(ap);
}

void ac_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(true, fmt, ap);
	va_end(ap);
}

int ac_finish(int rc)
{
	json_object *errs;
	FILE *f;

	if (!doc)
		return rc;
	if (rc && json_object_object_get_ex(doc, "errors", &errs) &&
	    !json_object_array_length(errs)) {
		char buf[64];

		snprintf(buf, sizeof(buf),
			 "failed with exit status %d (see standard error)", rc);
		agora_json_doc_error(doc, false, rc, buf);
	}
	if ((f = fdopen(json_fd, "w"))) {
		fputs(json_object_to_json_string_ext(
			      doc, JSON_C_TO_STRING_PRETTY |
					   JSON_C_TO_STRING_NOSLASHESCAPE),
		      f);
		fputc('\n', f);
		if (fclose(f) && !rc)
			rc = 1;
	}
	json_object_put(doc);
	doc = NULL;
	return rc;
}

json_object *ac_str(const char *s)
{
	return json_object_new_string(s ? s : "");
}

json_object *ac_num(double v)
{
	return json_object_new_double(v);
}

json_object *ac_int(long long v)
{
	return json_object_new_int64(v);
}
