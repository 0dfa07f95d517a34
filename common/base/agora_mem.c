/*
 * agora_mem.c - array growth (agora_mem.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "agora_mem.h"

int agora_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c;
	void *np;

	if (!p || !cap || !elem) {
		errno = EINVAL;
		return -1;
	}
	if (need <= *cap)
		return 0;
	if (need > SIZE_MAX / elem) {
		errno = ENOMEM;
		return -1;
	}
	c = *cap ? *cap : 16;
	while (c < need)
		c = c > SIZE_MAX / 2 ? need : c * 2;
	if (c > SIZE_MAX / elem)
		c = need;
	if (!(np = realloc(*p, c * elem))) {
		errno = ENOMEM;
		return -1;
	}
	*p = np;
	*cap = c;
	return 0;
}
