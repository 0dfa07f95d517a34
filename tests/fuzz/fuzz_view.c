/* Fuzz target: the view file (common/base/agora_view.c). */
#include <stdlib.h>
#include <string.h>

#include "agora_view.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	agora_view_t v, w;
	agora_err_t err;
	char *out;

	if (agora_view_parse((const char *) data, size, "fuzz.json", &v, &err))
		return 0;
	/* a view that parses must format and read back the same entries */
	out = agora_view_format(&v);
	if (!out)
		abort();
	if (agora_view_parse(out, strlen(out), "reformatted.json", &w, &err) ||
	    w.n_apps != v.n_apps || w.n_leases != v.n_leases)
		abort();
	agora_view_free(&w);
	free(out);
	agora_view_free(&v);
	return 0;
}
