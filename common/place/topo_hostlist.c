/*
 * topo_hostlist.c - see topo_hostlist.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "topo_hostlist.h"

typedef struct hbuf {
	char *v;
	size_t n, cap;
} hbuf_t;

static int hbuf_add(hbuf_t *b, const char *name, size_t len)
{
	if (len == 0 || len >= TOPO_HOSTNAME_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (b->n == TOPO_HOSTLIST_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (agora_grow((void **) &b->v, &b->cap, b->n + 1, TOPO_HOSTNAME_LEN))
		return -1;
	memcpy(b->v + b->n * TOPO_HOSTNAME_LEN, name, len);
	b->v[b->n * TOPO_HOSTNAME_LEN + len] = '\0';
	b->n++;
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* one item "pre[ranges]suf" or "name" of length len */
static int expand_item(hbuf_t *b, const char *s, size_t len)
{
	const char *lb = memchr(s, '[', len), *rb, *p;
	char name[TOPO_HOSTNAME_LEN];
	size_t pre, suf;

	if (!lb) {
		if (memchr(s, ']', len))
			goto bad;
		return hbuf_add(b, s, len);
	}
	rb = memchr(lb, ']', len - (size_t) (lb - s));
	if (!rb || memchr(rb + 1, '[', len - (size_t) (rb + 1 - s)) ||
	    memchr(rb + 1, ']', len - (size_t) (rb + 1 - s)))
		goto bad;
	pre = (size_t) (lb - s);
	suf = len - (size_t) (rb + 1 - s);
	p = lb + 1;
	while (p < rb) {
		const char *q = p;
		unsigned long a, c, x;
		int width;
		char *end;

		while (q < rb && is_digit(*q))
			q++;
		if (q == p || q - p > 9)
			goto bad;
		width = (int) (q - p);
		a = strtoul(p, &end, 10);
		c = a;
		if (*q == '-') {
			const char *r = ++q;

			while (q < rb && is_digit(*q))
				q++;
			if (q == r || q - r > 9)
				goto bad;
			c = strtoul(r, &end, 10);
			if (c < a)
				goto bad;
		}
		if (q < rb && *q != ',')
			goto bad;
		if (c - a >= TOPO_HOSTLIST_MAX)
			goto bad;
		for (x = a; x <= c; x++) {
			int w = snprintf(name, sizeof(name), "%.*s%0*lu%.*s",
					 (int) pre, s, width, x, (int) suf,
					 rb + 1);

			if (w < 0 || (size_t) w >= sizeof(name))
				goto bad;
			if (hbuf_add(b, name, (size_t) w) < 0)
				return -1;
		}
		p = q < rb ? q + 1 : q;
		if (q < rb && p == rb)
			goto bad; /* trailing comma */
	}
	if (p == lb + 1)
		goto bad; /* "[]" */
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

char *topo_hostlist_expand(const char *spec, size_t *n)
{
	hbuf_t b = { 0 };
	const char *s = spec;

	if (!spec || !n) {
		errno = EINVAL;
		return NULL;
	}
	while (*s) {
		const char *e = s;
		int depth = 0;

		/* item ends at a ',' outside brackets */
		while (*e && (depth || *e != ',')) {
			if (*e == '[')
				depth++;
			else if (*e == ']')
				depth--;
			if (depth < 0 || depth > 1 || *e == ' ' || *e == '\t')
				goto bad;
			e++;
		}
		if (depth || e == s)
			goto bad;
		if (expand_item(&b, s, (size_t) (e - s)) < 0)
			goto fail;
		s = *e ? e + 1 : e;
		if (*e && !*s)
			goto bad;
	}
	if (!b.v) {
		b.v = malloc(1);
		if (!b.v) {
			errno = ENOMEM;
			return NULL;
		}
	}
	*n = b.n;
	return b.v;
bad:
	errno = EINVAL;
fail:
	free(b.v);
	return NULL;
}

long topo_hostlist_count(const char *spec)
{
	size_t n;
	char *v = topo_hostlist_expand(spec, &n);

	if (!v)
		return -1;
	free(v);
	return (long) n;
}

int topo_hostlist_contains(const char *spec, const char *host)
{
	size_t n, i;
	char *v = topo_hostlist_expand(spec, &n);
	int found = 0;

	if (!v)
		return -1;
	for (i = 0; i < n && !found; i++)
		found = !strcmp(v + i * TOPO_HOSTNAME_LEN, host);
	free(v);
	return found;
}

/*
 * split "c1n017" into prefix length 3, number 17, width 3 (width 0 when
 * the number is not zero-padded: "c1n9" and "c1n10" are neighbours);
 * -1 if the name does not end in digits.
 */
static int split_name(const char *s, size_t *plen, unsigned long *num,
		      int *width)
{
	size_t len = strlen(s), i = len;

	while (i > 0 && is_digit(s[i - 1]))
		i--;
	if (i == len || len - i > 9)
		return -1;
	*plen = i;
	*num = strtoul(s + i, NULL, 10);
	*width = (len - i > 1 && s[i] == '0') ? (int) (len - i) : 0;
	return 0;
}

/* same numbering scheme: both unpadded, or padded to the same width
 * (an unpadded number as wide as the padding also fits, "c09","c10") */
static int same_width(int wa, int wb, unsigned long nb)
{
	if (wa == wb)
		return 1;
	if (wa > 0 && wb == 0) {
		int digits = 1;

		while (nb >= 10) {
			nb /= 10;
			digits++;
		}
		return digits == wa;
	}
	return 0;
}

char *topo_hostlist_compress(const char *names, size_t first, size_t n)
{
	size_t cap = 256, off = 0, i = 0;
	char *out = malloc(cap);

	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	out[0] = '\0';
	while (i < n) {
		const char *a = names + (first + i) * TOPO_HOSTNAME_LEN;
		size_t pl, pl2, j = i + 1;
		unsigned long na, nb, nj;
		int wa, wj, w;
		char item[2 * TOPO_HOSTNAME_LEN + 32];

		if (split_name(a, &pl, &na, &wa) == 0) {
			nb = na;
			for (; j < n; j++) {
				const char *b = names +
						(first + j) * TOPO_HOSTNAME_LEN;

				if (split_name(b, &pl2, &nj, &wj) < 0 ||
				    pl2 != pl || strncmp(a, b, pl) ||
				    !same_width(wa, wj, nj) || nj != nb + 1)
					break;
				nb = nj;
			}
		}
		if (j == i + 1)
			w = snprintf(item, sizeof(item), "%s", a);
		else
			w = snprintf(item, sizeof(item), "%.*s[%0*lu-%0*lu]",
				     (int) pl, a, wa, na, wa, nb);
		if (w < 0)
			w = 0;
		if (agora_grow((void **) &out, &cap, off + (size_t) w + 2, 1)) {
			free(out);
			return NULL;
		}
		off += (size_t) snprintf(out + off, cap - off, "%s%s",
					 off ? "," : "", item);
		i = j;
	}
	return out;
}
