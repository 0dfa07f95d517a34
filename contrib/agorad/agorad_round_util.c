/*
 * agorad_round_util.c - the small helpers every file of a round uses
 * (agorad_round_int.h), kept apart so that the round's files import no
 * one in a circle: agorad_round.c calls agorad_survey.c and
 * agorad_auction.c, and all three call these.
 */
#include <errno.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "agorad_round_int.h"

void scopy(char *dst, const char *src, size_t size)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

int cluster_index(const ad_round_t *r, const char *name)
{
	for (int c = 0; c < r->n_clusters; c++)
		if (!strcmp(r->clusters[c].name, name))
			return c;
	return -1;
}

int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= w;
	}
	return 0;
}

double ad_now_s(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}
