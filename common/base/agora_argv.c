/*
 * agora_argv.c - a command line split into words, without a shell
 * (agora_argv.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agora_argv.h"

static int fail(const char *what, const char *why, char ***argv,
		agora_err_t *err, void *mem)
{
	free(mem);
	*argv = NULL;
	agora_err_set(err, "%s: %s", what ? what : "command", why);
	errno = EINVAL;
	return -1;
}

int agora_argv_split(const char *cmd, const char *what, char ***argv,
		     agora_err_t *err)
{
	size_t len = cmd ? strlen(cmd) : 0, max_words = len / 2 + 2;
	char **v, *out;
	const char *p = cmd ? cmd : "";
	int n = 0;

	*argv = NULL;
	/* the pointers, then the words' characters (never longer than cmd
	 * plus one NUL per word) */
	v = malloc(max_words * sizeof(char *) + len + max_words);
	if (!v) {
		errno = ENOMEM;
		return -1;
	}
	out = (char *) (v + max_words);
	while (*p) {
		bool word = false;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		v[n] = out;
		while (*p && *p != ' ' && *p != '\t') {
			word = true;
			if (*p == '\'') {
				const char *q = strchr(p + 1, '\'');

				if (!q)
					return fail(what, "unterminated '",
						    argv, err, v);
				memcpy(out, p + 1, (size_t) (q - p - 1));
				out += q - p - 1;
				p = q + 1;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' &&
					    (p[1] == '"' || p[1] == '\\'))
						p++;
					*out++ = *p;
				}
				if (*p != '"')
					return fail(what, "unterminated \"",
						    argv, err, v);
				p++;
			} else if (*p == '\\') {
				if (!p[1])
					return fail(what, "trailing backslash",
						    argv, err, v);
				*out++ = p[1];
				p += 2;
			} else {
				*out++ = *p++;
			}
		}
		if (word) {
			*out++ = '\0';
			n++;
		}
	}
	v[n] = NULL;
	if (!n)
		return fail(what, "no command", argv, err, v);
	if (v[0][0] != '/')
		return fail(what,
			    "the program must be an absolute path (it is run "
			    "without a shell and without a PATH search)",
			    argv, err, v);
	*argv = v;
	return n;
}
