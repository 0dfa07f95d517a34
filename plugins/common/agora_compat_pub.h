/*
 * agora_compat_pub.h - the public libslurm API (slurm/slurm.h) as it differs
 * between Slurm releases, for agoractl and agorad (doc/design.md, "Slurm
 * releases").  Keyed on SLURM_VERSION_NUMBER of the slurm/slurm_version.h
 * the tools are built against (configure: SLURM_PUBLIC_CPPFLAGS), like
 * agora_compat.h for the plugins.  Include after slurm/slurm.h.
 */
#ifndef AGORA_COMPAT_PUB_H
#define AGORA_COMPAT_PUB_H

#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

#define AGORA_SLURM_MM(maj, min) (((maj) << 8) | (min))
#define AGORA_SLURM_TREE_MM      (SLURM_VERSION_NUMBER >> 8)
#define AGORA_SLURM_AT_LEAST(maj, min)                                         \
	(AGORA_SLURM_TREE_MM >= AGORA_SLURM_MM(maj, min))

#if AGORA_SLURM_TREE_MM != AGORA_SLURM_MM(22, 5) &&                            \
	AGORA_SLURM_TREE_MM != AGORA_SLURM_MM(24, 11)
#error "Agora supports Slurm 22.05 and 24.11: add the release to agora_compat_pub.h"
#endif

/*
 * 23.11 renamed the opaque list and hostlist types (List -> list_t *,
 * hostlist_t -> hostlist_t *) and dropped slurm_get_errno() (errno is set).
 * The tools are written in 22.05's names; hostlist handles are
 * agora_hostlist_t on every release.
 */
#if AGORA_SLURM_AT_LEAST(23, 11)
typedef list_t *List;
typedef list_itr_t *ListIterator;
typedef hostlist_t *agora_hostlist_t;
#define slurm_get_errno() (errno)
/* 23.11 dropped the malloc() variant: a malloc()ed copy, as before */
static inline char *agora_hostlist_ranged_malloc(hostlist_t *hl)
{
	size_t n = 256;
	char *buf = NULL;

	for (;;) {
		char *nb = realloc(buf, n);

		if (!nb) {
			free(buf);
			return NULL;
		}
		buf = nb;
		if (slurm_hostlist_ranged_string(hl, n, buf) >= 0)
			return buf;
		if (n > (1u << 26)) {
			free(buf);
			return NULL;
		}
		n *= 2;
	}
}
#define slurm_hostlist_ranged_string_malloc agora_hostlist_ranged_malloc
#else
typedef hostlist_t agora_hostlist_t;
#endif

/*
 * SlurmctldPlugstack (slurmctld/agora's pairs in "scontrol show config",
 * slurm_conf_t.slurmctld_plugstack_conf) exists up to 22.05; later
 * releases read the view file (StateSaveLocation/agora_view.json).
 */
#define AGORA_HAVE_CTLD_PLUGSTACK (!AGORA_SLURM_AT_LEAST(23, 2))

/*
 * The switch tree: slurm_load_topo() gives topo_info_t records up to 22.05.
 * From 23.11 the answer is the topology plugin's own data, which libslurm
 * decodes only by loading that plugin (topology_tree.so) into the caller,
 * and in a program linked with the public libslurm that load fails
 * ("undefined symbol: topo_conf", a libslurmfull global): record_count is
 * 0.  There the select/cons_tres wrapper publishes the leaves as
 * "Leaf[<switch>]=<nodes>" pairs in the select section of "scontrol show
 * config" (slurm_conf_t.select_conf_key_pairs, agora_compat.h
 * agora_leaf_pairs_append()), which agorad reads instead.
 */
#define AGORA_TOPO_IN_SELECT_CONF AGORA_SLURM_AT_LEAST(23, 11)

/* The items of slurm_conf_t's key-pair lists: Slurm's config_key_pair_t
 * (src/common/read_config.h, the same on 22.05 and 24.11), not in the
 * public headers. */
typedef struct {
	char *name;
	char *value;
} agora_key_pair_t;

#endif /* AGORA_COMPAT_PUB_H */
