/*
 * Unit tests of the name sanitiser (common/base/agora_sanitize.c) and of the
 * view file reader/renderer (common/base/agora_view.c): nothing a user puts in
 * an app name may add a line or a key to the rendered key=value pairs.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agora_sanitize.h"
#include "agora_view.h"

static char *san(const char *s, size_t len, bool *changed)
{
	static char out[AGORA_NAME_SIZE];
	bool c = agora_sanitize_name(s, len, out);

	if (changed)
		*changed = c;
	return out;
}

static void assert_safe(const char *s)
{
	const unsigned char *p;

	assert_true(strlen(s) <= AGORA_NAME_MAX);
	for (p = (const unsigned char *) s; *p; p++)
		assert_true(agora_sanitize_plain(*p) || *p == '\\' ||
			    *p == '~' || *p == '(' || *p == ')');
}

static void test_plain_names_unchanged(void **state)
{
	bool ch = true;

	(void) state;
	assert_string_equal(san("vc_6c71a0", 9, &ch), "vc_6c71a0");
	assert_false(ch);
	assert_string_equal(san("team-a.b+c@x:y/z", 16, &ch),
			    "team-a.b+c@x:y/z");
	assert_false(ch);
}

static void test_injection_characters_escaped(void **state)
{
	const char *evil = "a\nLease[1]=gpus=99 x\r\033[2J\\~[]# ,\"'";
	bool ch = false;
	char *s;

	(void) state;
	s = san(evil, strlen(evil), &ch);
	assert_true(ch);
	assert_safe(s);
	assert_null(strchr(s, '\n'));
	assert_null(strchr(s, '='));
	assert_null(strchr(s, '['));
	assert_null(strchr(s, ' '));
	assert_string_equal(san("a=b", 3, NULL), "a\\x3db");
	assert_string_equal(san("a\nb", 3, NULL), "a\\x0ab");
	assert_string_equal(san("\\x3d", 4, NULL), "\\x5cx3d");
	assert_string_equal(san("\xc3\xa9", 2, NULL), "\\xc3\\xa9");
	/* the escape of a backslash differs from an escaped '=' */
	assert_string_not_equal(san("a=b", 3, NULL), "a\\x5cx3db");
}

static void test_embedded_nul_and_empty(void **state)
{
	char a[AGORA_NAME_SIZE];

	(void) state;
	/* "a\0b" must not collapse into the account "a" */
	strcpy(a, san("a\0b", 3, NULL));
	assert_string_equal(a, "a\\x00b");
	assert_string_not_equal(a, san("a", 1, NULL));
	assert_string_equal(san("", 0, NULL), "(empty)");
	assert_string_equal(san(NULL, 0, NULL), "(empty)");
	/* a real name "(empty)" cannot look like the marker */
	assert_string_equal(san("(empty)", 7, NULL), "\\x28empty\\x29");
}

static void test_long_names_capped_and_distinct(void **state)
{
	char a[5000], b[5000], sa[AGORA_NAME_SIZE], want[AGORA_NAME_SIZE];
	bool ch = false;

	(void) state;
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 1] = 'y';
	strcpy(sa, san(a, sizeof(a), &ch));
	assert_true(ch);
	assert_safe(sa);
	assert_int_equal(strlen(sa), AGORA_NAME_MAX);
	assert_non_null(strchr(sa, '~'));
	assert_string_not_equal(sa, san(b, sizeof(b), NULL));
	/* exactly AGORA_NAME_MAX plain bytes fit; one more is cut */
	memset(want, 'x', AGORA_NAME_MAX);
	want[AGORA_NAME_MAX] = '\0';
	assert_string_equal(san(a, AGORA_NAME_MAX, &ch), want);
	assert_false(ch);
	assert_non_null(strchr(san(a, AGORA_NAME_MAX + 1, NULL), '~'));
	/* a cut never splits an escape */
	memset(a, '\n', 200);
	strcpy(sa, san(a, 200, NULL));
	assert_safe(sa);
	assert_int_equal((strchr(sa, '~') - sa) % 4, 0);
}

/* Collects rendered pairs as "key=value\n" lines. */
typedef struct {
	char buf[65536];
	size_t n_pairs;
} sink_t;

static void emit(void *arg, const char *key, const char *value)
{
	sink_t *s = arg;
	size_t len = strlen(s->buf);

	assert_null(strpbrk(key, "\n\r="));
	assert_null(strpbrk(value, "\n\r"));
	snprintf(s->buf + len, sizeof(s->buf) - len, "%s=%s\n", key, value);
	s->n_pairs++;
}

static const char good[] =
	"{\"time\":1700000000,\"cluster\":\"c1\",\"pass\":3,\"apps\":["
	"{\"name\":\"acct_a\",\"quota\":10,\"usage\":2.5,\"credit\":7.5,"
	"\"rho\":1.25},"
	"{\"name\":\"acct_b\",\"quota\":10,\"usage\":0,\"credit\":10}],"
	"\"leases\":[{\"job\":12,\"gpus\":8,\"end\":1700000600,"
	"\"state\":\"active\"},{\"job\":13,\"gpus\":4,\"end\":1700000700,"
	"\"state\":\"grace\",\"requeue_at\":1700000710}],"
	"\"future_field\":{\"x\":1}}";

static void test_view_render_all(void **state)
{
	agora_view_t v;
	agora_err_t err = { { 0 } };
	sink_t s = { { 0 }, 0 };

	(void) state;
	assert_int_equal(
		agora_view_parse(good, strlen(good), "v.json", &v, &err), 0);
	assert_int_equal(v.n_apps, 2);
	assert_int_equal(v.n_leases, 2);
	agora_view_render(&v, NULL, NULL, emit, &s);
	assert_string_equal(
		s.buf,
		"View=1700000000\nApps=2\n"
		"Credit[acct_a]=credit=7.50 quota=10.00 usage=2.50 GPU-h rho=1.25\n"
		"Credit[acct_b]=credit=10.00 quota=10.00 usage=0.00 GPU-h\n"
		"Leases=2\n"
		"Lease[12]=gpus=8 until=1700000600 state=active\n"
		"Lease[13]=gpus=4 until=1700000700 state=grace\n");
	agora_view_free(&v);
}

static void test_view_render_hidden(void **state)
{
	agora_view_t v;
	agora_view_hide_t h = { "PrivateData=usage", "PrivateData=jobs" };
	sink_t s = { { 0 }, 0 };

	(void) state;
	assert_int_equal(
		agora_view_parse(good, strlen(good), "v.json", &v, NULL), 0);
	agora_view_render(&v, &h, NULL, emit, &s);
	assert_null(strstr(s.buf, "acct_a"));
	assert_null(strstr(s.buf, "usage="));
	assert_null(strstr(s.buf, "[12]"));
	assert_null(strstr(s.buf, "[13]"));
	assert_string_equal(s.buf,
			    "View=1700000000\nApps=2\n"
			    "Credit=hidden: PrivateData=usage\n"
			    "Leases=2\nLeaseJobs=hidden: PrivateData=jobs\n"
			    "Lease[#1]=gpus=8 until=1700000600 state=active\n"
			    "Lease[#2]=gpus=4 until=1700000700 state=grace\n");
	agora_view_free(&v);
}

static void test_view_hostile_names(void **state)
{
	const char *text =
		"{\"time\":1,\"apps\":[{\"name\":\"x\\nCredit[root]=credit=1e9"
		"\",\"quota\":1,\"usage\":0,\"credit\":1},"
		"{\"name\":\"a\\u0000b\",\"quota\":1,\"usage\":0,\"credit\":1},"
		"{\"name\":\"\\u001b]0;pwned\\u0007\",\"quota\":1,\"usage\":0,"
		"\"credit\":1}],\"leases\":[]}";
	agora_view_t v;
	sink_t s = { { 0 }, 0 };

	(void) state;
	assert_int_equal(
		agora_view_parse(text, strlen(text), "v.json", &v, NULL), 0);
	agora_view_render(&v, NULL, NULL, emit, &s);
	/* 3 apps: 3 Credit pairs + View, Apps, Leases: no extra pair */
	assert_int_equal(s.n_pairs, 6);
	assert_null(strstr(s.buf, "\nCredit[root]"));
	assert_null(strchr(s.buf, '\033'));
	assert_null(strchr(s.buf, '\a'));
	assert_non_null(strstr(s.buf, "Credit[a\\x00b]="));
	agora_view_free(&v);
}

static void test_view_errors_name_file_and_line(void **state)
{
	agora_view_t v;
	agora_err_t err = { { 0 } };

	(void) state;
	assert_int_equal(agora_view_parse("{\n\"apps\": [\n,]}", 15,
					  "/s/agora_view.json", &v, &err),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "/s/agora_view.json:3: not JSON"));
	assert_int_equal(agora_view_parse("[1]", 3, "f", &v, &err), -1);
	assert_string_equal(err.text, "f: top level: not a JSON object");
	assert_int_equal(agora_view_parse("{\"apps\":3}", 10, "f", &v, &err),
			 -1);
	assert_string_equal(err.text, "f: apps: not an array");
	assert_int_equal(agora_view_parse("{} x", 4, "f", &v, &err), -1);
	assert_string_equal(err.text, "f:1: not JSON: data after the value");
	assert_int_equal(agora_view_parse("", 0, "f", &v, &err), -1);
	assert_string_equal(err.text, "f: empty file");
	/* a time no int64_t holds (found by make fuzz: UB in the cast) */
	assert_int_equal(
		agora_view_parse("{\"time\":1.8e19}", 15, "f", &v, &err), -1);
	assert_string_equal(err.text, "f: time: out of range");
	assert_int_equal(
		agora_view_load("/nonexistent/agora_view.json", &v, NULL, &err),
		-1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(
		err.text,
		"/nonexistent/agora_view.json: No such file or directory");
}

static void test_view_malformed_entries_skipped(void **state)
{
	const char *text =
		"{\"apps\":[{\"name\":5,\"quota\":1,\"usage\":0,\"credit\":1},"
		"{\"name\":\"ok\",\"quota\":1,\"usage\":0,\"credit\":1},"
		"{\"name\":\"n\",\"quota\":\"1\",\"usage\":0,\"credit\":1}],"
		"\"leases\":[{\"job\":\"7\\nX=1\",\"gpus\":1,\"end\":2},"
		"{\"job\":8,\"gpus\":1,\"end\":2,\"state\":\"bad\\n\"}]}";
	agora_view_t v;
	sink_t s = { { 0 }, 0 };

	(void) state;
	assert_int_equal(agora_view_parse(text, strlen(text), "f", &v, NULL),
			 0);
	assert_int_equal(v.n_apps, 1);
	assert_int_equal(v.n_leases, 0);
	assert_int_equal(v.n_skipped, 4);
	assert_string_equal(v.skipped,
			    "apps[0]: name: missing or not a string");
	agora_view_render(&v, NULL, NULL, emit, &s);
	assert_non_null(strstr(
		s.buf,
		"ViewSkipped=4 malformed entries left out (first: apps[0]: name: missing or not a string)\n"));
	agora_view_free(&v);
}

static void test_view_load_and_same_file(void **state)
{
	char path[64];
	struct stat a, b;
	agora_view_t v;
	int fd;

	(void) state;
	/* mkstemp template: a prefix and six X */
	snprintf(path, sizeof(path), "%s", "/tmp/test_view_");
	memset(path + strlen(path), 'X', 6);
	path[strlen("/tmp/test_view_") + 6] = '\0';
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, good, strlen(good)), (ssize_t) strlen(good));
	close(fd);
	assert_int_equal(agora_view_load(path, &v, &a, NULL), 0);
	assert_int_equal(v.n_apps, 2);
	agora_view_free(&v);
	assert_int_equal(stat(path, &b), 0);
	assert_true(agora_view_same_file(&a, &b));
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, " ", 1), 1);
	close(fd);
	assert_int_equal(stat(path, &b), 0);
	assert_false(agora_view_same_file(&a, &b));
	unlink(path);
}

/* The writer and the reader agree: every field survives a round trip. */
static void test_view_format_round_trip(void **state)
{
	agora_view_app_t apps[2];
	agora_view_lease_t leases[2];
	agora_view_t v, w;
	agora_err_t err;
	char *text;

	(void) state;
	memset(&v, 0, sizeof(v));
	memset(apps, 0, sizeof(apps));
	memset(leases, 0, sizeof(leases));
	v.time = 1000;
	v.pass = 7;
	strcpy(v.cluster, "c1");
	strcpy(apps[0].name, "acct_a");
	apps[0].credit = 1.5, apps[0].quota = 2, apps[0].usage = 0.5;
	apps[0].rho = 1.25, apps[0].has_rho = true;
	strcpy(apps[1].name, "b");
	leases[0].job = 12, leases[0].gpus = 8, leases[0].start = 900;
	leases[0].end = 1100;
	leases[1].job = 13, leases[1].gpus = 4, leases[1].end = 1050;
	leases[1].grace = true, leases[1].requeue_at = 1060;
	v.apps = apps, v.n_apps = 2, v.leases = leases, v.n_leases = 2;
	text = agora_view_format(&v);
	assert_non_null(text);
	assert_int_equal(
		agora_view_parse(text, strlen(text), "rt.json", &w, &err), 0);
	assert_int_equal(w.time, 1000);
	assert_int_equal(w.pass, 7);
	assert_string_equal(w.cluster, "c1");
	assert_int_equal(w.n_apps, 2);
	assert_string_equal(w.apps[0].name, "acct_a");
	assert_true(w.apps[0].has_rho);
	assert_false(w.apps[1].has_rho);
	assert_true(w.apps[0].rho > 1.24 && w.apps[0].rho < 1.26);
	assert_int_equal(w.n_leases, 2);
	assert_int_equal(w.leases[0].start, 900);
	assert_int_equal(w.leases[0].end, 1100);
	assert_false(w.leases[0].grace);
	assert_true(w.leases[1].grace);
	assert_int_equal(w.leases[1].requeue_at, 1060);
	assert_int_equal(w.n_skipped, 0);
	agora_view_free(&w);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_names_unchanged),
		cmocka_unit_test(test_injection_characters_escaped),
		cmocka_unit_test(test_embedded_nul_and_empty),
		cmocka_unit_test(test_long_names_capped_and_distinct),
		cmocka_unit_test(test_view_render_all),
		cmocka_unit_test(test_view_render_hidden),
		cmocka_unit_test(test_view_hostile_names),
		cmocka_unit_test(test_view_errors_name_file_and_line),
		cmocka_unit_test(test_view_malformed_entries_skipped),
		cmocka_unit_test(test_view_load_and_same_file),
		cmocka_unit_test(test_view_format_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
