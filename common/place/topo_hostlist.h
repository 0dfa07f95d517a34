/*
 * topo_hostlist.h - the small part of Slurm's hostlist syntax agora-topo
 * needs: "c1n[1-32],gpu[01-04,07],login1".  One bracket group per name,
 * numeric ranges keep their zero padding.  Not a full Slurm hostlist
 * (no multi-dimensional "a[1-2]b[3-4]").
 */
#ifndef TOPO_HOSTLIST_H
#define TOPO_HOSTLIST_H

#include <stddef.h>

#define TOPO_HOSTLIST_MAX 1000000 /* names one expansion may produce */
#define TOPO_HOSTNAME_LEN 64

/*
 * Expand spec into a malloc'd array of *n names of TOPO_HOSTNAME_LEN
 * characters each (names[i * TOPO_HOSTNAME_LEN]); the caller frees it.
 * Returns NULL with errno EINVAL (bad syntax, name too long, too many)
 * or ENOMEM.  An empty spec gives *n = 0 and a non-NULL pointer.
 */
char *topo_hostlist_expand(const char *spec, size_t *n);

/* Number of names spec expands to, or -1/EINVAL. */
long topo_hostlist_count(const char *spec);

/* 1 if host is in spec, 0 if not, -1/EINVAL on bad spec. */
int topo_hostlist_contains(const char *spec, const char *host);

/*
 * Compress names[first..first+n) (TOPO_HOSTNAME_LEN stride) into Slurm
 * hostlist syntax: consecutive numbers with the same prefix and width
 * become prefix[a-b].  Returns a malloc'd string or NULL/ENOMEM.
 */
char *topo_hostlist_compress(const char *names, size_t first, size_t n);

#endif
