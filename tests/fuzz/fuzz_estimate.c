/* Fuzz target: the run-time history's state text (common/policy/pol_estimate.c). */
#include <stdlib.h>
#include <string.h>

#include "pol_estimate.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size), *out = NULL, *out2 = NULL;
	pol_est_t *e = pol_est_create(NULL), *f = pol_est_create(NULL);
	pol_est_key_t k = { "a", "0", NULL, 8, NULL };
	agora_err_t err;

	if (s && e && f && !pol_est_load(e, s, "fuzz.txt", &err)) {
		/* a state that loads must save, read back and save the same */
		out = pol_est_save(e);
		if (!out || pol_est_load(f, out, "resaved.txt", &err) ||
		    !(out2 = pol_est_save(f)) || strcmp(out, out2))
			abort();
		(void) pol_est_remaining(e, &k, 3600, 100, NULL);
	}
	free(out);
	free(out2);
	pol_est_destroy(&e);
	pol_est_destroy(&f);
	free(s);
	return 0;
}
