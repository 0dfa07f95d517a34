/*
 * agora_json.h - one strict reader for the JSON files Agora keeps or is
 * handed (the view, agorad's loan state): the whole text must be one JSON
 * value, with only white space after it, and a bad one is named by file
 * and line.
 *
 * Pure libc and json-c, no clock, no logging, no global state.
 */
#ifndef AGORA_JSON_H
#define AGORA_JSON_H

#include <stddef.h>

#include <json-c/json.h>

#include "agora_err.h"

/*
 * Parse text[0..len) named name (for errors).  The new reference, or NULL
 * with errno EINVAL and err "NAME:LINE: not JSON: why" (an empty text, a
 * syntax error, a text cut short, data after the value, a NUL byte inside)
 * or ENOMEM.
 */
json_object *agora_json_parse(const char *text, size_t len, const char *name,
			      agora_err_t *err);

/*
 * Read and parse the file at path (agora_file_read: no symbolic link, at
 * most max_bytes), and where that fails for any reason but ENOENT, or the
 * file is missing, path.prev (the copy agora_file_write_atomic keeps).
 * The value, or NULL with errno (ENOENT when neither file exists) and err.
 * *used_prev (may be NULL) is set to 1 when the value is path.prev's; err
 * then says why path itself was not used.
 */
json_object *agora_json_read_file(const char *path, size_t max_bytes,
				  int *used_prev, agora_err_t *err);

#endif
