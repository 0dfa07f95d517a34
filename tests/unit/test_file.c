/* Unit tests of safe state files (common/base/agora_file.c). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agora_file.h"
#include "agora_json.h"
#include "agora_mem.h"

/* A fresh directory under /tmp (mkdtemp template: prefix + six X). */
static void make_dir(char *dir, size_t n)
{
	snprintf(dir, n, "%s", "/tmp/agora-file-");
	memset(dir + strlen(dir), 'X', 6);
	dir[strlen("/tmp/agora-file-") + 6] = '\0';
	assert_non_null(mkdtemp(dir));
}

static void put(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	agora_err_t err = { { 0 } };

	if (agora_file_read(path, 1 << 20, &buf, &len, &err) < 0)
		fail_msg("%s", err.text);
	assert_int_equal(len, strlen(want));
	assert_string_equal(buf, want);
	free(buf);
}

static void cleanup(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Mode 0600 whatever the umask or an old .new; .prev keeps the previous
 * version; no .new is left behind. */
static void test_file_write_atomic(void **state)
{
	char dir[64], path[128], prev[140], tmp[140];
	agora_err_t err = { { 0 } };
	struct stat st;
	mode_t old = umask(0);

	(void) state;
	make_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/state.json", dir);
	snprintf(prev, sizeof(prev), "%s.prev", path);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	/* a stale .new with a wide mode */
	put(tmp, "junk", 4);
	assert_int_equal(chmod(tmp, 0666), 0);
	assert_int_equal(agora_file_write_atomic(path, "one\n", 4, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(access(prev, F_OK), -1); /* nothing before */
	expect_text(path, "one\n");
	assert_int_equal(agora_file_write_atomic(path, "two\n", 4, &err), 0);
	expect_text(path, "two\n");
	expect_text(prev, "one\n");
	assert_int_equal(stat(prev, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(agora_file_write_atomic(path, "", 0, &err), 0);
	expect_text(path, "");
	expect_text(prev, "two\n");
	umask(old);
	cleanup(dir);
}

/* A symbolic link at the path, or at path.new, is refused; what it
 * points to is never written. */
static void test_file_symlinks_refused(void **state)
{
	char dir[64], path[128], target[128], tmp[140];
	agora_err_t err = { { 0 } };
	char *buf = NULL;
	size_t len;

	(void) state;
	make_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/state.json", dir);
	snprintf(target, sizeof(target), "%s/victim", dir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	put(target, "keep", 4);
	assert_int_equal(symlink(target, path), 0);
	errno = 0;
	assert_int_equal(agora_file_write_atomic(path, "evil", 4, &err), -1);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(err.text, "state.json"));
	assert_non_null(strstr(err.text, "symbolic link"));
	expect_text(target, "keep");
	assert_int_equal(agora_file_read(path, 100, &buf, &len, &err), -1);
	assert_int_equal(errno, ELOOP);
	assert_null(buf);
	/* the temporary file: O_NOFOLLOW */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(agora_file_write_atomic(path, "evil", 4, &err), -1);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(err.text, "state.json.new"));
	expect_text(target, "keep");
	assert_int_equal(access(path, F_OK), -1);
	cleanup(dir);
}

/* The reader: missing file, size cap, NUL byte, a directory. */
static void test_file_read_errors(void **state)
{
	char dir[64], path[128];
	agora_err_t err = { { 0 } };
	char *buf = NULL;
	size_t len = 0;

	(void) state;
	make_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f.txt", dir);
	assert_int_equal(agora_file_read(path, 100, &buf, &len, &err), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.text, "f.txt"));
	put(path, "0123456789", 10);
	assert_int_equal(agora_file_read(path, 10, &buf, &len, &err), 0);
	assert_int_equal(len, 10);
	free(buf);
	assert_int_equal(agora_file_read(path, 9, &buf, &len, &err), -1);
	assert_int_equal(errno, EFBIG);
	assert_null(buf);
	assert_non_null(strstr(err.text, "larger than 9 bytes"));
	put(path, "ab\0cd", 5);
	assert_int_equal(agora_file_read(path, 100, &buf, &len, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "NUL byte at offset 2"));
	assert_int_equal(agora_file_read(dir, 100, &buf, &len, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "not a regular file"));
	cleanup(dir);
}

/* agora_file_read_ex: AGORA_FILE_FOLLOW reads through a link (plain
 * agora_file_read refuses it); st is the fstat of the file read. */
static void test_file_read_ex_follow_and_stat(void **state)
{
	char dir[64], path[128], link[128];
	agora_err_t err = { { 0 } };
	struct stat st, want;
	char *buf = NULL;
	size_t len = 0;

	(void) state;
	make_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f.txt", dir);
	snprintf(link, sizeof(link), "%s/l.txt", dir);
	put(path, "abc\n", 4);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(agora_file_read(link, 100, &buf, &len, &err), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(agora_file_read_ex(link, 100, AGORA_FILE_FOLLOW, &buf,
					    &len, &st, &err),
			 0);
	assert_string_equal(buf, "abc\n");
	assert_int_equal(len, 4);
	free(buf);
	assert_int_equal(stat(path, &want), 0);
	assert_true(st.st_ino == want.st_ino && st.st_dev == want.st_dev);
	assert_int_equal(agora_file_read_ex(link, 3, AGORA_FILE_FOLLOW, &buf,
					    &len, NULL, &err),
			 -1);
	assert_int_equal(errno, EFBIG);
	assert_null(buf);
	cleanup(dir);
}

/* agora_grow: doubles from 16, keeps the contents, refuses overflow. */
static void test_mem_grow(void **state)
{
	int *v = NULL;
	size_t cap = 0, i;

	(void) state;
	assert_int_equal(agora_grow((void **) &v, &cap, 0, sizeof(*v)), 0);
	assert_null(v);
	assert_int_equal(agora_grow((void **) &v, &cap, 1, sizeof(*v)), 0);
	assert_int_equal(cap, 16);
	for (i = 0; i < 16; i++)
		v[i] = (int) i;
	assert_int_equal(agora_grow((void **) &v, &cap, 17, sizeof(*v)), 0);
	assert_int_equal(cap, 32);
	assert_int_equal(agora_grow((void **) &v, &cap, 100, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	for (i = 0; i < 16; i++)
		assert_int_equal(v[i], (int) i);
	assert_int_equal(agora_grow((void **) &v, &cap, 20, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	assert_int_equal(
		agora_grow((void **) &v, &cap, SIZE_MAX / 2, sizeof(*v)), -1);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(cap, 128);
	assert_non_null(v);
	assert_int_equal(agora_grow((void **) &v, &cap, 200, 0), -1);
	assert_int_equal(errno, EINVAL);
	free(v);
}

/* agora_json_parse: one value, white space after it, bad text named by
 * file and line */
static void test_json_parse(void **state)
{
	agora_err_t err = { { 0 } };
	json_object *o;

	(void) state;
	o = agora_json_parse("{\"a\": 1}\n \t", 11, "s.json", &err);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	json_object_put(o);
	o = agora_json_parse("[1,\n2]", 6, "s.json", &err);
	assert_non_null(o);
	json_object_put(o);
	/* a syntax error on line 3 */
	assert_null(agora_json_parse("{\n\"a\":\n,}", 9, "s.json", &err));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "s.json:3: not JSON: "));
	/* cut short: a half-written file */
	assert_null(agora_json_parse("{\"a\": [1,\n2", 11, "s.json", &err));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "s.json:2: not JSON: "));
	/* data after the value, on its line */
	assert_null(agora_json_parse("{}\n\n{}", 6, "s.json", &err));
	assert_string_equal(err.text,
			    "s.json:3: not JSON: data after the value");
	/* a NUL byte after the value is data, not white space */
	assert_null(agora_json_parse("{} \0", 4, "s.json", &err));
	assert_string_equal(err.text,
			    "s.json:1: not JSON: data after the value");
	assert_null(agora_json_parse("", 0, "s.json", &err));
	assert_string_equal(err.text, "s.json:1: not JSON: empty");
	assert_null(agora_json_parse("null", 4, "s.json", &err));
	assert_int_equal(errno, EINVAL);
}

/* agora_json_read_file: the file, else the .prev the writer keeps */
static void test_json_read_file(void **state)
{
	char dir[64], path[128], prev[160];
	agora_err_t err = { { 0 } };
	json_object *o, *v;
	int used_prev = -1;

	(void) state;
	make_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/loans.json", dir);
	snprintf(prev, sizeof(prev), "%s%s", path, AGORA_FILE_PREV);
	/* neither file: ENOENT, nothing to say beyond the file's name */
	assert_null(agora_json_read_file(path, 1 << 20, &used_prev, &err));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(used_prev, 0);
	assert_non_null(strstr(err.text, path));
	/* two writes: the second is the file, the first its .prev */
	assert_int_equal(agora_file_write_atomic(path, "{\"v\":1}", 7, &err),
			 0);
	assert_int_equal(agora_file_write_atomic(path, "{\"v\":2}", 7, &err),
			 0);
	o = agora_json_read_file(path, 1 << 20, &used_prev, &err);
	assert_non_null(o);
	assert_int_equal(used_prev, 0);
	assert_true(json_object_object_get_ex(o, "v", &v));
	assert_int_equal(json_object_get_int(v), 2);
	json_object_put(o);
	/* the file cut short: .prev is read, and err says why */
	put(path, "{\"v\":", 5);
	o = agora_json_read_file(path, 1 << 20, &used_prev, &err);
	assert_non_null(o);
	assert_int_equal(used_prev, 1);
	assert_true(json_object_object_get_ex(o, "v", &v));
	assert_int_equal(json_object_get_int(v), 1);
	json_object_put(o);
	assert_non_null(strstr(err.text, "loans.json:1: not JSON: "));
	assert_non_null(strstr(err.text, "; read "));
	assert_non_null(strstr(err.text, "loans.json.prev instead"));
	/* the file missing (a rename in flight): .prev */
	assert_int_equal(unlink(path), 0);
	o = agora_json_read_file(path, 1 << 20, &used_prev, &err);
	assert_non_null(o);
	assert_int_equal(used_prev, 1);
	json_object_put(o);
	/* both bad: both named, the file's errno */
	put(path, "{", 1);
	put(prev, "[1] 2", 5);
	assert_null(agora_json_read_file(path, 1 << 20, &used_prev, &err));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(used_prev, 0);
	assert_non_null(strstr(err.text, "loans.json:1: not JSON: "));
	assert_non_null(
		strstr(err.text, "loans.json.prev:1: not JSON: data after"));
	/* only .prev, and it is bad: its error, EINVAL */
	assert_int_equal(unlink(path), 0);
	assert_null(agora_json_read_file(path, 1 << 20, &used_prev, &err));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "loans.json.prev:1: not JSON"));
	/* bad file, no .prev: the file's error alone */
	assert_int_equal(unlink(prev), 0);
	put(path, "{", 1);
	assert_null(agora_json_read_file(path, 1 << 20, &used_prev, &err));
	assert_int_equal(errno, EINVAL);
	assert_null(strstr(err.text, ".prev"));
	/* over the size cap */
	put(path, "{\"long\": \"0123456789\"}", 22);
	assert_null(agora_json_read_file(path, 8, &used_prev, &err));
	assert_int_equal(errno, EFBIG);
	cleanup(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_write_atomic),
		cmocka_unit_test(test_file_symlinks_refused),
		cmocka_unit_test(test_file_read_errors),
		cmocka_unit_test(test_file_read_ex_follow_and_stat),
		cmocka_unit_test(test_mem_grow),
		cmocka_unit_test(test_json_parse),
		cmocka_unit_test(test_json_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
