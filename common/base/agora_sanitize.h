/*
 * agora_sanitize.h - make a user-controlled name safe to print in
 * "key=value" output (scontrol show config, agoractl).
 *
 * App and account names reach Agora's output from users: with
 * AppDefinition=name_prefix an app is the prefix of a job name, which
 * sbatch accepts with spaces, '=', newlines or escape sequences.  Printed
 * as is, such a name would add lines or keys to "scontrol show config", or
 * drive the terminal of whoever reads it.
 *
 * The result holds only the bytes [A-Za-z0-9._+@:/-]; every other byte
 * (control characters, space, '=', '[', ']', '\', '~', '#', ',', quotes,
 * any byte >= 0x80) is written as "\xHH", so that two different names stay
 * different.  The result is at most AGORA_NAME_MAX bytes: a longer one is
 * cut (never inside an escape) and ends in "~HHHHHHHH", a 32-bit FNV-1a
 * hash of the whole original name, so that long names that share a prefix
 * still differ.  An empty name is written "(empty)", a
 * string no real name can produce (parentheses are escaped).
 */
#ifndef AGORA_SANITIZE_H
#define AGORA_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest sanitised name, in bytes (without the terminating NUL). */
#define AGORA_NAME_MAX 64
/* Size of the buffer agora_sanitize_name() writes. */
#define AGORA_NAME_SIZE (AGORA_NAME_MAX + 1)

/*
 * Write the printable form of the len bytes at src (NUL bytes included;
 * src may be NULL when len is 0) into out.  Returns true if the name had to
 * be changed (escaped or cut), false if out is an exact copy.
 */
bool agora_sanitize_name(const char *src, size_t len,
			 char out[AGORA_NAME_SIZE]);

/* True if byte c is printed as itself by agora_sanitize_name(). */
bool agora_sanitize_plain(unsigned char c);

#endif
