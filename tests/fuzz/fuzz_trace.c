/* Fuzz target: trace files, Philly and generic CSV (common/sim/trace_*.c). */
#include <stdlib.h>

#include "trace.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	trace_filter_t f;
	trace_t t;
	agora_err_t err;

	if (!s)
		return 0;
	if (trace_filter_parse("none", &f))
		abort();
	if (!trace_parse(s, "fuzz.csv", f, &t, &err))
		trace_free(&t);
	free(s);
	return 0;
}
