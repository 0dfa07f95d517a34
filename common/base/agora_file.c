/*
 * agora_file.c - safe state files (agora_file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "agora_file.h"

static int fail(agora_err_t *err, const char *path, int e, const char *why)
{
	agora_err_set(err, "%s: %s", path, why ? why : strerror(e));
	errno = e;
	return -1;
}

/* path + suffix into out (PATH_MAX-sized); -1/ENAMETOOLONG. */
static int with_suffix(char *out, size_t n, const char *path,
		       const char *suffix, agora_err_t *err)
{
	if ((size_t) snprintf(out, n, "%s%s", path, suffix) >= n)
		return fail(err, path, ENAMETOOLONG, "path too long");
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t) w;
	}
	return 0;
}

/* fsync the directory that holds path (so the rename is durable). */
static int sync_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd, rc, e;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int) (slash - path), path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

int agora_file_write_atomic(const char *path, const void *data, size_t len,
			    agora_err_t *err)
{
	char tmp[4096], prev[4096];
	struct stat st;
	bool have_old = false;
	int fd, e;

	if (!path || !*path || (len && !data)) {
		agora_err_set(err, "%s: no path or data",
			      path ? path : "(null)");
		errno = EINVAL;
		return -1;
	}
	if (with_suffix(tmp, sizeof(tmp), path, AGORA_FILE_NEW, err) < 0 ||
	    with_suffix(prev, sizeof(prev), path, AGORA_FILE_PREV, err) < 0)
		return -1;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return fail(err, path, ELOOP,
				    "is a symbolic link: refused");
		if (!S_ISREG(st.st_mode))
			return fail(err, path, EINVAL,
				    "is not a regular file: refused");
		have_old = true;
	} else if (errno != ENOENT) {
		return fail(err, path, errno, NULL);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return fail(err, tmp, errno, NULL);
	if (fchmod(fd, 0600) < 0 || write_all(fd, data, len) < 0 ||
	    fsync(fd) < 0) {
		e = errno;
		close(fd);
		goto out_tmp;
	}
	if (close(fd) < 0) {
		e = errno;
		goto out_tmp;
	}
	if (have_old) {
		/* the current version becomes .prev */
		if (unlink(prev) < 0 && errno != ENOENT) {
			e = errno;
			fail(err, prev, e, NULL);
			unlink(tmp);
			errno = e;
			return -1;
		}
		if (link(path, prev) < 0 && rename(path, prev) < 0) {
			e = errno;
			fail(err, prev, e, NULL);
			unlink(tmp);
			errno = e;
			return -1;
		}
	}
	if (rename(tmp, path) < 0) {
		e = errno;
		goto out_tmp;
	}
	if (sync_dir(path) < 0)
		return fail(err, path, errno,
			    "written, but fsync of its directory failed");
	return 0;
out_tmp:
	fail(err, tmp, e, NULL);
	unlink(tmp);
	errno = e;
	return -1;
}

int agora_file_read(const char *path, size_t max_bytes, char **buf, size_t *len,
		    agora_err_t *err)
{
	return agora_file_read_ex(path, max_bytes, 0, buf, len, NULL, err);
}

int agora_file_read_ex(const char *path, size_t max_bytes, int flags,
		       char **buf, size_t *len, struct stat *stp,
		       agora_err_t *err)
{
	struct stat st;
	size_t n = 0, cap;
	char *b, *nul;
	int fd, e;

	if (buf)
		*buf = NULL;
	if (max_bytes > SIZE_MAX / 4)
		max_bytes = SIZE_MAX / 4; /* no overflow of the sizes below */
	if (!path || !buf || !len) {
		agora_err_set(err, "%s: bad arguments", path ? path : "(null)");
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC |
				(flags & AGORA_FILE_FOLLOW ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		if (errno == ELOOP && !(flags & AGORA_FILE_FOLLOW))
			return fail(err, path, ELOOP,
				    "is a symbolic link: refused");
		return fail(err, path, errno, NULL);
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return fail(err, path, e, NULL);
	}
	if (stp)
		*stp = st;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, path, EINVAL, "is not a regular file");
	}
	if ((uint64_t) st.st_size > (uint64_t) max_bytes) {
		char why[64];

		close(fd);
		snprintf(why, sizeof(why), "larger than %zu bytes", max_bytes);
		return fail(err, path, EFBIG, why);
	}
	/* the size may change under us: read to EOF, never past the cap */
	cap = (size_t) st.st_size + 1;
	if (!(b = malloc(cap + 1))) {
		close(fd);
		return fail(err, path, ENOMEM, "out of memory");
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (n > max_bytes)
				break;
			cap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
			if (!(nb = realloc(b, cap + 1))) {
				free(b);
				close(fd);
				return fail(err, path, ENOMEM, "out of memory");
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			free(b);
			close(fd);
			return fail(err, path, e, NULL);
		}
		if (r == 0)
			break;
		n += (size_t) r;
	}
	close(fd);
	if (n > max_bytes) {
		char why[64];

		free(b);
		snprintf(why, sizeof(why), "larger than %zu bytes", max_bytes);
		return fail(err, path, EFBIG, why);
	}
	if ((nul = memchr(b, '\0', n))) {
		char why[64];

		snprintf(why, sizeof(why), "NUL byte at offset %zu",
			 (size_t) (nul - b));
		free(b);
		return fail(err, path, EINVAL, why);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}
