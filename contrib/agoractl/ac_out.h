/*
 * ac_out.h - agoractl's output: text for people, or with --json one JSON
 * document in the shape of squeue --json (meta, errors, warnings, then
 * the command's data; common/base/agora_prom.h builds the meta block).
 *
 * With --json the text that the commands print goes to /dev/null and the
 * document to the real standard output when the command ends; messages
 * stay on standard error and are also kept in "errors" / "warnings".
 */
#ifndef AC_OUT_H
#define AC_OUT_H

#include <stdbool.h>

#include <json-c/json.h>

extern bool ac_json;

/* Take --json out of argv (anywhere after the command); *argc adjusted.
 * Returns 0, or -1 if the document cannot be set up. */
int ac_out_init(int *argc, char **argv);
/* Add key = v (ownership taken) to the document; no-op without --json. */
void ac_add(const char *key, json_object *v);
/* "agoractl: MESSAGE" on stderr, and into errors (warnings). */
void ac_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ac_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the document (with --json) and return rc. */
int ac_finish(int rc);

/* json-c shorthands */
json_object *ac_str(const char *s);
json_object *ac_num(double v);
json_object *ac_int(long long v);

#endif
