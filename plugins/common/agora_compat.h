/*
 * agora_compat.h - the one place where Agora's plugins differ between Slurm
 * releases (doc/design.md, "Slurm releases").
 *
 * Keyed on the version the configured Slurm tree declares
 * (SLURM_VERSION_NUMBER in its config.h), so a plugin is built for exactly
 * one release and supporting the next release is one more case here.  The
 * core (common/) never sees any of this.  Include after config.h (and after
 * src/common/slurm_xlator.h where a file uses it).
 *
 * Supported: 22.05 (Debian 12) and 24.11 (Debian 13).
 */
#ifndef AGORA_COMPAT_H
#define AGORA_COMPAT_H

#ifndef SLURM_VERSION_NUMBER
#error "include config.h of the configured Slurm tree before agora_compat.h"
#endif

/* major.minor of the tree, e.g. 0x1605 for 22.05, 0x180b for 24.11 */
#define AGORA_SLURM_MM(maj, min) (((maj) << 8) | (min))
#define AGORA_SLURM_TREE_MM (SLURM_VERSION_NUMBER >> 8)
#define AGORA_SLURM_AT_LEAST(maj, min) \
	(AGORA_SLURM_TREE_MM >= AGORA_SLURM_MM(maj, min))

#if AGORA_SLURM_TREE_MM != AGORA_SLURM_MM(22, 5) && \
	AGORA_SLURM_TREE_MM != AGORA_SLURM_MM(24, 11)
#error "Agora supports Slurm 22.05 and 24.11: add the release to agora_compat.h"
#endif

/*
 * Headers that moved: 23.02 put the plugin interfaces in src/interfaces/,
 * 23.11 merged select/cons_common into select/cons_tres.  Use as
 * #include AGORA_INC_GRES.
 */
#if AGORA_SLURM_AT_LEAST(23, 2)
#define AGORA_INC_GRES "src/interfaces/gres.h"
#define AGORA_INC_TOPOLOGY "src/interfaces/topology.h"
#define AGORA_INC_SELECT "src/interfaces/select.h"
#define AGORA_INC_PREEMPT "src/interfaces/preempt.h"
#else
#define AGORA_INC_GRES "src/common/gres.h"
#define AGORA_INC_TOPOLOGY "src/common/slurm_topology.h"
#define AGORA_INC_SELECT "src/common/select.h"
#define AGORA_INC_PREEMPT "src/slurmctld/preempt.h"
#endif
#if AGORA_SLURM_AT_LEAST(23, 11)
#define AGORA_INC_CONS "src/plugins/select/cons_tres/select_cons_tres.h"
#else
#define AGORA_INC_CONS "src/plugins/select/cons_common/cons_common.h"
#endif

/*
 * Types renamed or made opaque.  The plugins are written in 22.05's names;
 * newer releases get 22.05's names back here, except where the old name now
 * means something else (hostlist_t became the struct in 23.11: use
 * agora_hostlist_t, a pointer on every release).
 */
#include "src/common/list.h"
#include "src/common/hostlist.h"
#if AGORA_SLURM_AT_LEAST(23, 11)
typedef list_t *List;
typedef list_itr_t *ListIterator;
typedef hostlist_t *agora_hostlist_t;
#else
typedef hostlist_t agora_hostlist_t;
typedef struct job_details job_details_t;
#endif

/* lock_state_files() moved from slurmctld/locks.h to common/state_save.h */
#if AGORA_SLURM_AT_LEAST(23, 2)
#include "src/common/state_save.h"
#else
#include "src/slurmctld/locks.h"
#endif

/*
 * The leaf (level 0) switches of topology/tree, one node bitmap each (the
 * caller frees them with agora_leaf_switches_free); 0 without topology/tree.
 * 22.05: slurmctld's switch_record_table; 23.02+: topology_g_get().
 */
#include "src/common/bitstring.h"
extern int agora_leaf_switches(bitstr_t ***maps);
extern void agora_leaf_switches_free(bitstr_t **maps, int n);

#endif /* AGORA_COMPAT_H */
