/*
 * pol_app_index.c - name -> int map (pol_app_index.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_app.h"
#include "pol_app_index.h"

typedef struct slot {
	char *key; /* NULL: empty */
	unsigned long long hash;
	int value;
} slot_t;

struct pol_app_index {
	slot_t *slot;
	size_t n_slot; /* a power of two, or 0 */
	size_t n;
	unsigned long long (*hash)(const char *);
};

pol_app_index_t *pol_app_index_create_hash(
	unsigned long long (*hash)(const char *))
{
	pol_app_index_t *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->hash = hash ? hash : pol_app_hash;
	return m;
}

pol_app_index_t *pol_app_index_create(void)
{
	return pol_app_index_create_hash(NULL);
}

void pol_app_index_destroy(pol_app_index_t **ip)
{
	size_t i;

	if (!ip || !*ip)
		return;
	for (i = 0; i < (*ip)->n_slot; i++)
		free((*ip)->slot[i].key);
	free((*ip)->slot);
	free(*ip);
	*ip = NULL;
}

/* The slot of key, or of the empty slot where it would go. */
static size_t find(const pol_app_index_t *m, const char *key,
		   unsigned long long h)
{
	size_t mask = m->n_slot - 1, k = (size_t) h & mask;

	while (m->slot[k].key &&
	       (m->slot[k].hash != h || strcmp(m->slot[k].key, key)))
		k = (k + 1) & mask;
	return k;
}

static int grow(pol_app_index_t *m)
{
	size_t n = m->n_slot ? 2 * m->n_slot : 16, i;
	slot_t *old = m->slot, *ns = calloc(n, sizeof(*ns));
	size_t n_old = m->n_slot;

	if (!ns) {
		errno = ENOMEM;
		return -1;
	}
	m->slot = ns;
	m->n_slot = n;
	for (i = 0; i < n_old; i++)
		if (old[i].key)
			m->slot[find(m, old[i].key, old[i].hash)] = old[i];
	free(old);
	return 0;
}

int pol_app_index_put(pol_app_index_t *m, const char *key, int value)
{
	unsigned long long h;
	size_t k;
	char *copy;

	if (!key)
		key = "";
	h = m->hash(key);
	if (m->n_slot) {
		k = find(m, key, h);
		if (m->slot[k].key) {
			m->slot[k].value = value;
			return 1;
		}
	}
	/* at most half full */
	if (2 * (m->n + 1) > m->n_slot && grow(m) < 0)
		return -1;
	if (!(copy = strdup(key))) {
		errno = ENOMEM;
		return -1;
	}
	k = find(m, key, h);
	m->slot[k].key = copy;
	m->slot[k].hash = h;
	m->slot[k].value = value;
	m->n++;
	return 0;
}

int pol_app_index_get(const pol_app_index_t *m, const char *key, int *value)
{
	size_t k;

	if (!m || !m->n_slot)
		return -1;
	if (!key)
		key = "";
	k = find(m, key, m->hash(key));
	if (!m->slot[k].key)
		return -1;
	if (value)
		*value = m->slot[k].value;
	return 0;
}

int pol_app_index_remove(pol_app_index_t *m, const char *key)
{
	size_t mask, k, j;

	if (!m || !m->n_slot)
		return -1;
	if (!key)
		key = "";
	mask = m->n_slot - 1;
	k = find(m, key, m->hash(key));
	if (!m->slot[k].key)
		return -1;
	free(m->slot[k].key);
	m->slot[k].key = NULL;
	m->n--;
	/* shift the rest of the run back where its entries may live */
	for (j = (k + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
		size_t home = (size_t) m->slot[j].hash & mask;

		/* entry j may move to the hole k if its home is not in
		 * (k, j] (cyclically) */
		if ((j > k && (home <= k || home > j)) ||
		    (j < k && (home <= k && home > j))) {
			m->slot[k] = m->slot[j];
			m->slot[j].key = NULL;
			k = j;
		}
	}
	return 0;
}

size_t pol_app_index_count(const pol_app_index_t *m)
{
	return m ? m->n : 0;
}

size_t pol_app_index_slots(const pol_app_index_t *m)
{
	return m ? m->n_slot : 0;
}
