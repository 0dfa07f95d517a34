/*
 * agora_num.h - number parsing shared by the core's text parsers
 * (agora.conf, policy parameter strings).
 */
#ifndef AGORA_NUM_H
#define AGORA_NUM_H

#include <stddef.h>

/*
 * The first len bytes of s as a finite number, optionally followed by a
 * time suffix s, m, h or d (case-insensitive) that multiplies it by 1, 60,
 * 3600 or 86400: "90", "1.5h", "30m".  No range check beyond finiteness.
 * 0, or -1 (not a number; *out untouched).
 */
int agora_parse_seconds(const char *s, size_t len, double *out);

#endif
