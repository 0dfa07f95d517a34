/*
 * Unit tests of agora_argv_split (common/base/agora_argv.c), table-driven:
 * a command line, the words a shell-less execve gets, or the error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agora_argv.h"

static void test_split(void **state)
{
	static const struct {
		const char *cmd;
		const char *words[10]; /* NULL-terminated; {NULL}: an error */
		const char *err;       /* a part of the error text */
	} rows[] = {
		{ "/usr/bin/demand", { "/usr/bin/demand", NULL }, NULL },
		{ "  /bin/echo   3\t4 ",
		  { "/bin/echo", "3", "4", NULL },
		  NULL },
		/* nothing is expanded: no shell */
		{ "/bin/echo $HOME; rm -rf / | x > y",
		  { "/bin/echo", "$HOME;", "rm", "-rf", "/", "|", "x", ">", "y",
		    NULL },
		  NULL },
		{ "/bin/echo 'a b' \"c \\\"d\\\\\" e\\ f",
		  { "/bin/echo", "a b", "c \"d\\", "e f", NULL },
		  NULL },
		{ "/bin/echo ''", { "/bin/echo", "", NULL }, NULL },
		{ "/bin/echo a'b'\"c\"", { "/bin/echo", "abc", NULL }, NULL },
		{ "", { NULL }, "no command" },
		{ "   ", { NULL }, "no command" },
		{ "demand 3", { NULL }, "absolute path" },
		{ "/bin/echo 'x", { NULL }, "unterminated '" },
		{ "/bin/echo \"x", { NULL }, "unterminated \"" },
		{ "/bin/echo x\\", { NULL }, "trailing backslash" },
	};

	(void) state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		agora_err_t err = { { 0 } };
		char **v = (char **) 1;
		int n = agora_argv_split(rows[k].cmd, "LoanDemandSource", &v,
					 &err),
		    want = 0;

		while (rows[k].words[want])
			want++;
		if (!want) {
			if (n != -1 || v || errno != EINVAL ||
			    !strstr(err.text, rows[k].err) ||
			    !strstr(err.text, "LoanDemandSource"))
				fail_msg(
					"row %zu ('%s'): want error '%s', got %d '%s'",
					k, rows[k].cmd, rows[k].err, n,
					err.text);
			continue;
		}
		if (n != want)
			fail_msg("row %zu ('%s'): %d words, want %d", k,
				 rows[k].cmd, n, want);
		for (int w = 0; w < want; w++)
			if (strcmp(v[w], rows[k].words[w]))
				fail_msg("row %zu word %d: '%s', want '%s'", k,
					 w, v[w], rows[k].words[w]);
		assert_null(v[want]);
		free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
