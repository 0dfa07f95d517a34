/* Fuzz target: agora-sim cluster files (common/sim/sim_cluster.c). */
#include <stdlib.h>

#include "sim_cluster.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	pol_cluster_t *c;
	agora_err_t err;

	if (!s)
		return 0;
	c = sim_cluster_parse(s, "fuzz.cluster", NULL, NULL, &err);
	pol_cluster_destroy(&c);
	free(s);
	return 0;
}
