/* Fuzz target: agora-topo's model file (common/place/topo_model.c). */
#include <stdlib.h>

#include "topo_model.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	topo_model_t m = { 0 };
	agora_err_t err;

	if (s && !topo_model_parse_string(s, "fuzz.json", &m, &err)) {
		char *json = topo_model_to_json(&m);

		free(json);
		topo_model_free(&m);
	}
	free(s);
	return 0;
}
