/*
 * agora_sanitize.c - printable, bounded names for key=value output
 * (agora_sanitize.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agora_sanitize.h"

/* Bytes kept before "~HHHHHHHH" when a name is cut. */
#define CUT_KEEP (AGORA_NAME_MAX - 9)

bool agora_sanitize_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == '+' || c == '@' || c == ':' || c == '/';
}

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char) s[i];
		h *= 16777619u;
	}
	return h;
}

bool agora_sanitize_name(const char *src, size_t len, char out[AGORA_NAME_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0, cut = 0;
	bool changed = false;

	if (!src || !len) {
		strcpy(out, "(empty)");
		return true;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char) src[i];
		size_t w = agora_sanitize_plain(c) ? 1 : 4;

		/* remember where a cut would go, at a whole character */
		if (o + w <= CUT_KEEP)
			cut = o + w;
		if (o + w > AGORA_NAME_MAX) {
			/* too long: keep what fits before the hash */
			snprintf(out + cut, AGORA_NAME_SIZE - cut, "~%08x",
				 (unsigned) fnv1a(src, len));
			return true;
		}
		if (w == 1) {
			out[o++] = (char) c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 0xf];
			changed = true;
		}
	}
	out[o] = '\0';
	return changed;
}
