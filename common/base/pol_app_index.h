/*
 * pol_app_index.h - a name -> int map for per-job app lookups (issue 19
 * item 12): the snapshot's tenant index, the federation's usage table and
 * the per-account app cap look an app up once per job, under slurmctld's
 * job locks, so a lookup must not be linear in the number of apps.
 *
 * Open addressing with linear probing over a power-of-two table kept at
 * most half full (doubled when it would be fuller); a removal shifts the
 * following entries of its run back (no tombstones), so a table that sees
 * many puts and removes never slows down.  Keys are copied (any length).
 * Pure: no global state.
 */
#ifndef POL_APP_INDEX_H
#define POL_APP_INDEX_H

#include <stddef.h>

typedef struct pol_app_index pol_app_index_t;

/* An empty map hashing keys with pol_app_hash(); NULL on ENOMEM. */
pol_app_index_t *pol_app_index_create(void);
/* The same with another hash (tests force collisions with it). */
pol_app_index_t *pol_app_index_create_hash(
	unsigned long long (*hash)(const char *));
/* Free; *ip = NULL.  NULL or *ip == NULL: nothing happens. */
void pol_app_index_destroy(pol_app_index_t **ip);

/* Map key (NULL = "") to value: 0 added, 1 replaced, -1/ENOMEM (the map
 * is unchanged). */
int pol_app_index_put(pol_app_index_t *m, const char *key, int value);
/* The value of key into *value (may be NULL): 0, or -1 if absent. */
int pol_app_index_get(const pol_app_index_t *m, const char *key, int *value);
/* Remove key: 0, or -1 if absent. */
int pol_app_index_remove(pol_app_index_t *m, const char *key);
/* Number of keys, and slots (for tests of growth). */
size_t pol_app_index_count(const pol_app_index_t *m);
size_t pol_app_index_slots(const pol_app_index_t *m);

#endif
