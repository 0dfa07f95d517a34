/*
 * agora_mem.h - the one way the core grows an array.
 */
#ifndef AGORA_MEM_H
#define AGORA_MEM_H

#include <stddef.h>

/*
 * Make the array *p (elements of elem bytes, *cap of them allocated) hold
 * at least need elements: *cap doubles, from 16, until it does, and *p is
 * realloc()ed.  need <= *cap: nothing happens.  0, or -1 with errno
 * ENOMEM (out of memory, or a size that does not fit in size_t; EINVAL
 * for elem 0), *p and *cap unchanged.
 */
int agora_grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
