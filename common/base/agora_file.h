/*
 * agora_file.h - safe state files: one writer and one reader for every
 * file Agora keeps across restarts (the credit ledger, the view, leases).
 *
 * Pure libc, no clock, no logging, no global state.  Errors go to an
 * optional agora_err_t as "PATH: what is wrong" and errno.
 */
#ifndef AGORA_FILE_H
#define AGORA_FILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "agora_err.h"

/* Suffixes of the files next to path. */
#define AGORA_FILE_NEW  ".new"  /* being written */
#define AGORA_FILE_PREV ".prev" /* the previous version */

/*
 * Replace the file at path with data[0..len), atomically and durably:
 *  1. path must not be a symbolic link or anything but a regular file
 *     (ELOOP / EINVAL: refused, nothing written);
 *  2. write path.new: open(O_WRONLY|O_CREAT|O_TRUNC|O_NOFOLLOW|O_CLOEXEC,
 *     0600), fchmod 0600 (an older .new keeps no other mode), write
 *     everything, fsync;
 *  3. keep the current file (if any) as path.prev: a hard link, or,
 *     where the file system has none, a rename (path is then briefly
 *     missing, which a reader covers by falling back to path.prev);
 *  4. rename path.new to path; fsync the directory.
 * A crash at any point leaves path (or path.prev) whole.  The caller
 * serialises writers of one path.  0, or -1 with errno and err naming
 * the file; path.new is removed on failure.
 */
int agora_file_write_atomic(const char *path, const void *data, size_t len,
			    agora_err_t *err);

/*
 * Read the whole text file at path: open(O_RDONLY|O_NOFOLLOW|O_CLOEXEC),
 * a regular file only, at most max_bytes bytes, no NUL byte.  On success
 * *buf (owned by the caller, free()) holds the bytes plus a terminating
 * NUL and *len their count.  -1 with errno: ENOENT etc. from open, ELOOP
 * (a symbolic link), EINVAL (not a regular file, or a NUL byte: err gives
 * its offset), EFBIG (over max_bytes), ENOMEM; err names the file; *buf
 * is NULL then.
 */
int agora_file_read(const char *path, size_t max_bytes, char **buf, size_t *len,
		    agora_err_t *err);

/* Flags of agora_file_read_ex(). */
#define AGORA_FILE_FOLLOW 1 /* follow a symbolic link (files admins write) */

/*
 * agora_file_read() for every whole file the core reads.  flags:
 * AGORA_FILE_FOLLOW opens without O_NOFOLLOW (agora.conf, a topology
 * model, hwloc XML: admins link those); 0 is agora_file_read().  st, if
 * not NULL, receives the fstat() of the very file read (whenever it got
 * that far), so a caller can tell later whether the file changed.
 */
int agora_file_read_ex(const char *path, size_t max_bytes, int flags,
		       char **buf, size_t *len, struct stat *st,
		       agora_err_t *err);

#endif
