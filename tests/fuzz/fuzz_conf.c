/* Fuzz target: agora.conf (common/base/agora_conf.c). */
#include <stdlib.h>

#include "agora_conf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	agora_conf_t c;
	agora_err_t err;

	if (!s)
		return 0;
	agora_conf_defaults(&c);
	(void) agora_conf_parse_string(s, "fuzz.conf", &c, &err);
	agora_conf_free(&c);
	free(s);
	return 0;
}
