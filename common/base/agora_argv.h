/*
 * agora_argv.h - a command line split into words, without a shell
 * (LoanDemandSource=command:, issue 19 "Low").
 *
 * Words are separated by blanks (space, tab); '...' quotes everything up
 * to the next ', "..." quotes with \" and \\ as the only escapes, and a
 * backslash outside quotes takes the next character as it is.  Nothing is
 * expanded ($VAR, globs, ~, ;, |, > and the like are plain characters):
 * the words go to execve as they are.  The first word must be an absolute
 * path (no PATH search).
 *
 * Pure: libc only.
 */
#ifndef AGORA_ARGV_H
#define AGORA_ARGV_H

#include "agora_err.h"

/*
 * Split cmd into *argv (NULL-terminated; one allocation: free(*argv)
 * frees it all).  Returns the number of words, or -1 with errno EINVAL
 * (no word, an unterminated quote or a trailing backslash, a first word
 * that is not an absolute path; err, may be NULL, says which, naming
 * what) or ENOMEM; *argv is NULL then.
 */
int agora_argv_split(const char *cmd, const char *what, char ***argv,
		     agora_err_t *err);

#endif
