/*
 * agora_note.c - see agora_note.h.
 */
#include "agora_note.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX     "Agora: "
#define FED_PREFIX "Agora: fed"
#define ELLIPSIS   "..."

static bool starts(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

int agora_note_split(const char *s, const char **fed, size_t *fed_len,
		     const char **auc, size_t *auc_len)
{
	const char *p, *last = NULL;

	*fed = *auc = s;
	*fed_len = *auc_len = 0;
	if (!s || !*s)
		return 0;
	if (!starts(s, PREFIX))
		return -1;
	if (!starts(s, FED_PREFIX)) {
		*auc_len = strlen(s);
		return 0;
	}
	/* the last separator followed by an Agora note: the federation text
	 * holds bids and names, the auction note is ours and has none */
	for (p = s; (p = strstr(p, AGORA_NOTE_SEP PREFIX)); p++)
		last = p;
	if (!last || starts(last + strlen(AGORA_NOTE_SEP), FED_PREFIX)) {
		*fed_len = strlen(s);
		return 0;
	}
	*fed_len = (size_t) (last - s);
	*auc = last + strlen(AGORA_NOTE_SEP);
	*auc_len = strlen(*auc);
	return 0;
}

int agora_note_update(const char *cur, agora_note_part_t part, const char *text,
		      char **out)
{
	const char *fed, *auc;
	size_t fed_len, auc_len, sep, n;
	bool cut = false;
	char *s;

	*out = NULL;
	if (agora_note_split(cur, &fed, &fed_len, &auc, &auc_len))
		return -1;
	if (text && !*text)
		text = NULL;
	if (text && (!starts(text, PREFIX) ||
		     (part == AGORA_NOTE_FED) != starts(text, FED_PREFIX)))
		return -1;
	if (part == AGORA_NOTE_FED) {
		fed = text;
		fed_len = text ? strlen(text) : 0;
	} else {
		auc = text;
		auc_len = text ? strlen(text) : 0;
	}
	/* the auction note whole (cut only if alone too long), the
	 * federation text in what is left */
	if (auc_len > AGORA_NOTE_MAX)
		auc_len = AGORA_NOTE_MAX;
	sep = fed_len && auc_len ? strlen(AGORA_NOTE_SEP) : 0;
	if (fed_len + sep + auc_len > AGORA_NOTE_MAX) {
		size_t room = AGORA_NOTE_MAX - auc_len - sep;

		/* room for "Agora: fed" + "..." at least, else no fed part */
		if (room < strlen(FED_PREFIX) + strlen(ELLIPSIS))
			fed_len = sep = 0;
		else
			fed_len = room - strlen(ELLIPSIS);
		cut = fed_len > 0;
	}
	n = fed_len + sep + auc_len;
	if (!n)
		return cur && *cur ? 1 : 0;
	s = malloc(n + strlen(ELLIPSIS) + 1);
	if (!s) {
		errno = ENOMEM;
		return -1;
	}
	n = 0;
	if (fed_len) {
		memcpy(s, fed, fed_len);
		n = fed_len;
		if (cut) {
			memcpy(s + n, ELLIPSIS, strlen(ELLIPSIS));
			n += strlen(ELLIPSIS);
		}
	}
	if (sep) {
		memcpy(s + n, AGORA_NOTE_SEP, sep);
		n += sep;
	}
	if (auc_len) {
		memcpy(s + n, auc, auc_len);
		n += auc_len;
	}
	s[n] = '\0';
	if (cur && !strcmp(cur, s)) {
		free(s);
		return 0;
	}
	*out = s;
	return 1;
}
