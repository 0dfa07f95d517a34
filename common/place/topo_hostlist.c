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

/*
 * A walk over a spec's names without expanding them: the parser calls
 * visit once per plain name (a = c = 0, width -1) and once per numeric
 * range pre[a-c]suf (width: the start's digits, the zero padding), after
 * checking the syntax, the names' length and the running total against
 * TOPO_HOSTLIST_MAX.  visit returns 0 to go on, 1 to stop (found), -1 on
 * error (errno set).
 */
typedef struct walk {
	int (*visit)(struct walk *w, const char *pre, size_t pre_len,
		     const char *suf, size_t suf_len, unsigned long a,
		     unsigned long c, int width);
	size_t total;     /* names visited so far */
	hbuf_t buf;       /* expand: the names */
	const char *host; /* contains: the name looked for */
} walk_t;

static int digits_of(unsigned long x)
{
	int d = 1;

	while (x >= 10) {
		x /= 10;
		d++;
	}
	return d;
}

/* one item "pre[ranges]suf" or "name" of length len */
static int walk_item(walk_t *w, const char *s, size_t len)
{
	const char *lb = memchr(s, '[', len), *rb, *p;
	size_t pre, suf;
	int r;

	if (!lb) {
		if (memchr(s, ']', len) || len >= TOPO_HOSTNAME_LEN ||
		    w->total == TOPO_HOSTLIST_MAX)
			goto bad;
		w->total++;
		return w->visit(w, s, len, "", 0, 0, 0, -1);
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
		unsigned long a, c;
		int width, longest;

		while (q < rb && is_digit(*q))
			q++;
		if (q == p || q - p > 9)
			goto bad;
		width = (int) (q - p);
		a = strtoul(p, NULL, 10);
		c = a;
		if (*q == '-') {
			const char *r0 = ++q;

			while (q < rb && is_digit(*q))
				q++;
			if (q == r0 || q - r0 > 9)
				goto bad;
			c = strtoul(r0, NULL, 10);
			if (c < a)
				goto bad;
		}
		if (q < rb && *q != ',')
			goto bad;
		if (c - a >= TOPO_HOSTLIST_MAX - w->total)
			goto bad;
		/* the range's longest name is its last */
		longest = digits_of(c) > width ? digits_of(c) : width;
		if (pre + (size_t) longest + suf >= TOPO_HOSTNAME_LEN)
			goto bad;
		w->total += c - a + 1;
		if ((r = w->visit(w, s, pre, rb + 1, suf, a, c, width)))
			return r;
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

/* 0 when every item was visited, 1 when a visit stopped the walk, -1
 * with errno on bad syntax or a visit's error */
static int walk_spec(walk_t *w, const char *spec)
{
	const char *s = spec;
	int r;

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
		if ((r = walk_item(w, s, (size_t) (e - s))))
			return r;
		s = *e ? e + 1 : e;
		if (*e && !*s)
			goto bad;
	}
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

static int visit_expand(walk_t *w, const char *pre, size_t pre_len,
			const char *suf, size_t suf_len, unsigned long a,
			unsigned long c, int width)
{
	char name[TOPO_HOSTNAME_LEN];

	if (width < 0)
		return hbuf_add(&w->buf, pre, pre_len);
	for (unsigned long x = a; x <= c; x++) {
		int n = snprintf(name, sizeof(name), "%.*s%0*lu%.*s",
				 (int) pre_len, pre, width, x, (int) suf_len,
				 suf);

		if (n < 0 || (size_t) n >= sizeof(name)) {
			errno = EINVAL;
			return -1;
		}
		if (hbuf_add(&w->buf, name, (size_t) n) < 0)
			return -1;
	}
	return 0;
}

static int visit_count(walk_t *w, const char *pre, size_t pre_len,
		       const char *suf, size_t suf_len, unsigned long a,
		       unsigned long c, int width)
{
	(void) w;
	(void) pre;
	(void) pre_len;
	(void) suf;
	(void) suf_len;
	(void) a;
	(void) c;
	(void) width;
	return 0;
}

/* is w->host one of the names? by arithmetic: O(length) per range */
static int visit_contains(walk_t *w, const char *pre, size_t pre_len,
			  const char *suf, size_t suf_len, unsigned long a,
			  unsigned long c, int width)
{
	const char *h = w->host, *num;
	size_t hl = strlen(h), nl;
	unsigned long x;
	char back[16];

	if (width < 0)
		return hl == pre_len && !memcmp(h, pre, pre_len);
	if (hl <= pre_len + suf_len || memcmp(h, pre, pre_len) ||
	    memcmp(h + hl - suf_len, suf, suf_len))
		return 0;
	num = h + pre_len;
	nl = hl - pre_len - suf_len;
	if (nl > 9)
		return 0;
	for (size_t i = 0; i < nl; i++)
		if (!is_digit(num[i]))
			return 0;
	x = strtoul(num, NULL, 10);
	if (x < a || x > c)
		return 0;
	/* the very text the expansion prints: "c01" is not in c[1-2] */
	snprintf(back, sizeof(back), "%0*lu", width, x);
	return strlen(back) == nl && !memcmp(back, num, nl);
}

char *topo_hostlist_expand(const char *spec, size_t *n)
{
	walk_t w = { .visit = visit_expand };
	char *names;

	if (!spec || !n) {
		errno = EINVAL;
		return NULL;
	}
	if (walk_spec(&w, spec) < 0) {
		free(w.buf.v);
		return NULL;
	}
	/* an empty spec: a pointer all the same */
	if (!(names = w.buf.v ? w.buf.v : malloc(1))) {
		errno = ENOMEM;
		return NULL;
	}
	*n = w.buf.n;
	return names;
}

long topo_hostlist_count(const char *spec)
{
	walk_t w = { .visit = visit_count };

	if (!spec) {
		errno = EINVAL;
		return -1;
	}
	if (walk_spec(&w, spec) < 0)
		return -1;
	return (long) w.total;
}

/* Checks the whole spec, as expanding it would, before saying yes: a bad
 * item after the host's is still an error. */
int topo_hostlist_contains(const char *spec, const char *host)
{
	walk_t w = { .visit = visit_contains, .host = host };
	int found = 0, r;

	if (!spec || !host) {
		errno = EINVAL;
		return -1;
	}
	if ((r = walk_spec(&w, spec)) == 1) {
		found = 1;
		w.visit = visit_count; /* again: syntax and size only */
		w.total = 0;
		r = walk_spec(&w, spec);
	}
	return r < 0 ? -1 : found;
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
