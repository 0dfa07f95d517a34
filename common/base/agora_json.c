/*
 * agora_json.c - the strict JSON reader (agora_json.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_file.h"
#include "agora_json.h"

/* the line of byte off of text (1-based) */
static size_t line_of(const char *text, size_t len, size_t off)
{
	size_t line = 1;

	for (size_t i = 0; i < off && i < len; i++)
		line += text[i] == '\n';
	return line;
}

static json_object *bad(agora_err_t *err, const char *name, const char *text,
			size_t len, size_t off, const char *why)
{
	agora_err_set(err, "%s:%zu: not JSON: %s", name ? name : "(text)",
		      line_of(text, len, off), why);
	errno = EINVAL;
	return NULL;
}

json_object *agora_json_parse(const char *text, size_t len, const char *name,
			      agora_err_t *err)
{
	json_tokener *tok;
	json_object *root;
	enum json_tokener_error jerr;
	size_t end;

	if (!text || !len)
		return bad(err, name, "", 0, 0, "empty");
	if (len > (size_t) 0x7fffffff)
		return bad(err, name, text, len, 0, "larger than 2 GiB");
	if (!(tok = json_tokener_new())) {
		errno = ENOMEM;
		return NULL;
	}
	root = json_tokener_parse_ex(tok, text, (int) len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root || jerr != json_tokener_success) {
		if (root)
			json_object_put(root);
		if (jerr == json_tokener_continue) /* cut short */
			jerr = json_tokener_error_parse_eof;
		return bad(err, name, text, len, end,
			   jerr == json_tokener_success
				   ? "null"
				   : json_tokener_error_desc(jerr));
	}
	for (size_t i = end; i < len; i++)
		if (!text[i] || !strchr(" \t\r\n", text[i])) {
			json_object_put(root);
			return bad(err, name, text, len, i,
				   "data after the value");
		}
	return root;
}

static json_object *read_one(const char *path, size_t max_bytes,
			     agora_err_t *err)
{
	char *buf = NULL;
	size_t len = 0;
	json_object *o;
	int e;

	if (agora_file_read(path, max_bytes, &buf, &len, err) < 0)
		return NULL;
	o = agora_json_parse(buf, len, path, err);
	e = errno;
	free(buf);
	errno = e;
	return o;
}

json_object *agora_json_read_file(const char *path, size_t max_bytes,
				  int *used_prev, agora_err_t *err)
{
	agora_err_t e_main = { { 0 } }, e_prev = { { 0 } };
	char prev[4096];
	json_object *o;
	int e;

	if (used_prev)
		*used_prev = 0;
	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	if ((o = read_one(path, max_bytes, &e_main)))
		return o;
	e = errno;
	if ((size_t) snprintf(prev, sizeof(prev), "%s%s", path,
			      AGORA_FILE_PREV) >= sizeof(prev)) {
		agora_err_set(err, "%s", e_main.text);
		errno = e;
		return NULL;
	}
	if (!(o = read_one(prev, max_bytes, &e_prev))) {
		/* neither: a missing .prev is not worth a mention, a bad
		 * one is; errno is the main file's unless it is missing */
		if (errno == ENOENT)
			agora_err_set(err, "%s", e_main.text);
		else
			agora_err_set(err, "%s; %s", e_main.text, e_prev.text);
		errno = e != ENOENT ? e : errno;
		return NULL;
	}
	if (used_prev)
		*used_prev = 1;
	agora_err_set(err, "%s; read %s instead", e_main.text, prev);
	return o;
}
