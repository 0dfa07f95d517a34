#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agora_num.h"

int agora_parse_seconds(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	double mult = 1, d;

	if (!s || len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	switch (tolower((unsigned char) buf[len - 1])) {
	case 's':
		mult = 1;
		break;
	case 'm':
		mult = 60;
		break;
	case 'h':
		mult = 3600;
		break;
	case 'd':
		mult = 86400;
		break;
	default:
		mult = 0; /* no suffix */
		break;
	}
	if (mult)
		buf[len - 1] = '\0';
	else
		mult = 1;
	errno = 0;
	d = strtod(buf, &end);
	if (errno || end == buf || *end || !isfinite(d) || !isfinite(d * mult))
		return -1;
	*out = d * mult;
	return 0;
}
