/* Fuzz target: the credit ledger's state JSON (common/policy/pol_credit.c). */
#include <stdlib.h>

#include "pol_credit.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size), *out = NULL;
	pol_credit_t *l = pol_credit_create("fuzz", 3600, 3600, 10);
	agora_err_t err;

	if (s && l && !pol_credit_load(l, s, "fuzz.json", &err)) {
		/* a state that loads must save and read back */
		if (!pol_credit_save(l, &out) &&
		    pol_credit_load(l, out, "resaved.json", &err))
			abort();
		(void) pol_credit_get(l, "a", 1000);
	}
	free(out);
	pol_credit_destroy(&l);
	free(s);
	return 0;
}
