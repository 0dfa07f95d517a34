/*
 * standalone.c - replays a fuzz target's corpus without libFuzzer, in the
 * spirit of json-c's standalone runner: every file of the corpus
 * directories named on the command line (or $AGORA_FUZZ_CORPUS), and
 * AGORA_FUZZ_MUTATIONS (default 2000) seeded mutations of each (bit flips,
 * byte insertions and deletions, truncations, splices of two inputs).  A
 * crash or a sanitizer report fails the test; output is TAP.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

typedef struct input {
	uint8_t *data;
	size_t size;
} input_t;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int load_dir(const char *dir, input_t **in, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		fprintf(stderr, "%s: cannot open corpus directory\n", dir);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[4096];
		FILE *f;
		long len;
		input_t *ni;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		ni = realloc(*in, sizeof(**in) * (size_t) (*n + 1));
		if (!ni || len < 0) {
			fclose(f);
			closedir(d);
			return -1;
		}
		*in = ni;
		(*in)[*n].data = malloc((size_t) len + 1);
		(*in)[*n].size = (size_t) len;
		if (!(*in)[*n].data ||
		    fread((*in)[*n].data, 1, (size_t) len, f) != (size_t) len) {
			fclose(f);
			closedir(d);
			return -1;
		}
		fclose(f);
		(*n)++;
	}
	closedir(d);
	return 0;
}

/* One mutation of a (into buf, which holds up to cap bytes). */
static size_t mutate(const input_t *a, const input_t *b, uint8_t *buf,
		     size_t cap)
{
	size_t n = a->size < cap ? a->size : cap, i, k;
	static const char tokens[][8] = { "=",  ",",     ":",     "\n", "#",
					  "-1", "1e309", "nan",   "\"", "{",
					  "]",  "0x",    "99999", "" };

	memcpy(buf, a->data, n);
	for (k = 1 + next_rand() % 4; k > 0; k--) {
		switch (next_rand() % 6) {
		case 0: /* flip a bit */
			if (n)
				buf[next_rand() % n] ^=
					(uint8_t) (1u << (next_rand() % 8));
			break;
		case 1: /* insert a byte */
			if (n < cap) {
				i = n ? next_rand() % n : 0;
				memmove(buf + i + 1, buf + i, n - i);
				buf[i] = (uint8_t) next_rand();
				n++;
			}
			break;
		case 2: /* delete a byte */
			if (n) {
				i = next_rand() % n;
				memmove(buf + i, buf + i + 1, n - i - 1);
				n--;
			}
			break;
		case 3: /* truncate */
			if (n)
				n = next_rand() % n;
			break;
		case 4: { /* insert a token */
			const char *t =
				tokens[next_rand() %
				       (sizeof(tokens) / sizeof(tokens[0]))];
			size_t tl = strlen(t);

			if (n + tl <= cap) {
				i = n ? next_rand() % n : 0;
				memmove(buf + i + tl, buf + i, n - i);
				memcpy(buf + i, t, tl);
				n += tl;
			}
			break;
		}
		default: /* splice the tail of b */
			if (b->size) {
				size_t from = next_rand() % b->size;
				size_t at = n ? next_rand() % n : 0;
				size_t m = b->size - from;

				if (at + m > cap)
					m = cap - at;
				memcpy(buf + at, b->data + from, m);
				n = at + m;
			}
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	input_t *in = NULL;
	int n = 0, i, j, m;
	const char *env = getenv("AGORA_FUZZ_CORPUS");
	const char *mut = getenv("AGORA_FUZZ_MUTATIONS");
	long runs = 0;
	size_t cap = 1 << 16;
	uint8_t *buf = malloc(cap);

	m = mut ? atoi(mut) : 2000;
	for (i = 1; i < argc; i++)
		if (load_dir(argv[i], &in, &n))
			return 1;
	if (argc < 2 && env && load_dir(env, &in, &n))
		return 1;
	if (!n || !buf) {
		printf("1..1\nnot ok 1 - corpus is empty or unreadable\n");
		return 1;
	}
	printf("1..2\n");
	for (i = 0; i < n; i++, runs++)
		LLVMFuzzerTestOneInput(in[i].data, in[i].size);
	printf("ok 1 - %d corpus inputs\n", n);
	for (i = 0; i < n; i++)
		for (j = 0; j < m; j++, runs++) {
			size_t len = mutate(&in[i], &in[next_rand() % n], buf,
					    cap);

			LLVMFuzzerTestOneInput(buf, len);
		}
	printf("ok 2 - %ld inputs in all (%d mutations of each) without a crash\n",
	       runs, m);
	for (i = 0; i < n; i++)
		free(in[i].data);
	free(in);
	free(buf);
	return 0;
}
