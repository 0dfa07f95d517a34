/*
 * pol_app.c - app keys (pol_app.h).
 */
#include <stdio.h>
#include <string.h>

#include "pol_app.h"

unsigned long long pol_app_hash(const char *s)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char) *s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int pol_app_key(const char *name, char out[POL_APP_KEY_LEN])
{
	size_t n, cut;

	if (!name || !*name) {
		snprintf(out, POL_APP_KEY_LEN, "%s", POL_APP_NONE);
		return 1;
	}
	n = strlen(name);
	if (n < POL_APP_KEY_LEN) {
		memcpy(out, name, n + 1);
		return 0;
	}
	/* never cut a UTF-8 sequence: back off over continuation bytes */
	cut = POL_APP_PREFIX_LEN;
	while (cut > 0 && ((unsigned char) name[cut] & 0xc0) == 0x80)
		cut--;
	snprintf(out, POL_APP_KEY_LEN, "%.*s~%016llx", (int) cut, name,
		 pol_app_hash(name));
	return 1;
}
