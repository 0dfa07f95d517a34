/*
 * pol_placer.c - the placers by name (pol_placer_find(), pol_place.h):
 * one line per placer in placers[] below.
 */
#include <errno.h>
#include <string.h>

#include "pol_place.h"
#include "pol_topo_place.h"

static void *make_topo(const pol_cluster_t *c)
{
	return c ? pol_topo_place_create(c, NULL) : (errno = EINVAL, NULL);
}

static void release_topo(void *arg)
{
	pol_topo_place_t *t = arg;

	pol_topo_place_destroy(&t);
}

static const struct placer_def {
	const char *name;
	pol_place_f place;
	void *(*make)(const pol_cluster_t *c); /* NULL: no context */
	void (*release)(void *arg);
} placers[] = {
	{ "stock", pol_place_basic, NULL, NULL },
	{ "agora", pol_topo_place_job, make_topo, release_topo },
};

#define N_PLACERS (sizeof(placers) / sizeof(placers[0]))

int pol_placer_find(const char *name, const pol_cluster_t *c, pol_placer_t *out,
		    agora_err_t *err)
{
	const struct placer_def *d = NULL;
	size_t i;

	if (!out) {
		agora_err_set(err, "placement: no output");
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	for (i = 0; name && i < N_PLACERS; i++)
		if (!strcmp(placers[i].name, name))
			d = &placers[i];
	if (!d) {
		char known[64] = "";

		for (i = 0; i < N_PLACERS; i++) {
			if (i)
				strncat(known, ", ",
					sizeof(known) - strlen(known) - 1);
			strncat(known, placers[i].name,
				sizeof(known) - strlen(known) - 1);
		}
		agora_err_set(err, "unknown placement strategy '%s' (%s)",
			      name ? name : "", known);
		errno = ENOENT;
		return -1;
	}
	out->name = d->name;
	out->place = d->place;
	if (d->make) {
		out->arg = d->make(c);
		if (!out->arg) {
			int e = errno;

			agora_err_set(
				err,
				"placement %s: cannot build it for this cluster: %s",
				d->name, strerror(e));
			memset(out, 0, sizeof(*out));
			errno = e;
			return -1;
		}
		out->release = d->release;
	}
	return 0;
}

void pol_placer_release(pol_placer_t *pl)
{
	if (!pl)
		return;
	if (pl->release)
		pl->release(pl->arg);
	memset(pl, 0, sizeof(*pl));
}
