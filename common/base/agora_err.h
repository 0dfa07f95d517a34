/*
 * agora_err.h - a human-readable error that needs no allocation.
 *
 * Core functions that can fail for reasons an admin must read (a bad
 * config line, a bad trace row) take an optional agora_err_t *; on failure
 * they write one line into it ("FILE:LINE: KEY: what is wrong") and return
 * -1 with errno set.  The caller owns the struct (usually on its stack).
 */
#ifndef AGORA_ERR_H
#define AGORA_ERR_H

#define AGORA_ERR_LEN 512

typedef struct agora_err {
	char text[AGORA_ERR_LEN];
} agora_err_t;

/* Format into err (may be NULL: then nothing happens).  Truncates safely. */
void agora_err_set(agora_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
