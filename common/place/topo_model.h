/*
 * topo_model.h - the GPU locality model of a node type, as agora-topo
 * derives it from hwloc and as the select plugin and agora-sim read it.
 *
 * A topo_node_t is a pol_node_type_t (the policy view: level matrix,
 * socket and NVLink island per GPU) plus what only configuration needs:
 * per-GPU PCI bus id, NUMA node, PCIe switch and local cores (Slurm's
 * logical core indices, for gres.conf Cores=).
 *
 * Levels are always DERIVED from three per-GPU facts, lowest first
 * (topo_node_derive_levels()):
 *   same island        -> POL_LVL_NVLINK
 *   same pcie_switch   -> POL_LVL_PCIE    (pcie_switch >= 0)
 *   same socket        -> POL_LVL_SOCKET  (socket >= 0)
 *   otherwise          -> POL_LVL_NODE
 *
 * The model file is JSON (doc/topology.md):
 *   { "format": "agora-topo-model", "version": 1,
 *     "node_types": [ { "name", "nodes", "gpus", "sockets", "cpus",
 *                       "cores", "mem_mb", "gpu": [ {...} ],
 *                       "level": [[...]] } ] }
 *
 * Ownership: a topo_model_t is owned by the caller and released with
 * topo_model_free() (the struct itself stays).  Loaders leave *model
 * untouched on failure.
 */
#ifndef TOPO_MODEL_H
#define TOPO_MODEL_H

#include <stddef.h>

#include "agora_err.h"
#include "pol_model.h"

#define TOPO_MODEL_FORMAT  "agora-topo-model"
#define TOPO_MODEL_VERSION 1
#define TOPO_CORES_LEN     512
#define TOPO_NODES_LEN     1024
/* A model file is read whole (agora_file_read_ex(), links followed). */
#define TOPO_MODEL_MAX_BYTES ((size_t) 64 << 20)

typedef struct topo_gpu {
	char name[32];              /* hwloc osdev name (nvml0, cuda0) or "" */
	char pci_busid[32];         /* "0000:07:00.0" or "" */
	int socket;                 /* package logical index, -1 = unknown */
	int numa;                   /* NUMA node os index, -1 = unknown */
	int pcie_switch;            /* PCIe switch id on this node, -1 = none */
	int island;                 /* NVLink island id (>= 0) */
	char cores[TOPO_CORES_LEN]; /* local cores, Slurm syntax "0-15,32" */
} topo_gpu_t;

typedef struct topo_node {
	pol_node_type_t type;       /* name, n_gpus, level[][], ... */
	int n_cores;                /* physical cores of the node */
	char nodes[TOPO_NODES_LEN]; /* hostlist of nodes of this type, "" */
	topo_gpu_t gpu[POL_MAX_GPUS_PER_NODE];
} topo_node_t;

typedef struct topo_model {
	topo_node_t *types;
	int n_types;
} topo_model_t;

/*
 * Recompute n->type.level, gpu_socket and gpu_island from n->gpu[].
 * Island ids are renumbered densely in order of first GPU.
 */
void topo_node_derive_levels(topo_node_t *n);

/*
 * Override the NVLink islands.  spec lists islands separated by ',';
 * each island is a range "a-b", one GPU "a", or GPUs joined by '+'
 * ("0+2+5"): "0-3,4-7" is two islands of four.  GPUs not named become
 * singleton islands; a GPU named twice or out of range is an error.
 * Levels are re-derived.  0, or -1/EINVAL with err ("islands: ...") and
 * *n unchanged.
 */
int topo_node_set_islands(topo_node_t *n, const char *spec, agora_err_t *err);

/* Release what *model owns; *model becomes empty. */
void topo_model_free(topo_model_t *model);

/*
 * Parse a model from JSON text as if it were file 'name'.  0, or -1 with
 * errno EINVAL/ENOMEM and err "name: node_types[0].gpu[3].cores: why".
 */
int topo_model_parse_string(const char *text, const char *name,
			    topo_model_t *model, agora_err_t *err);

/* Read and parse the file at path (ENOENT etc. named with the path). */
int topo_model_load(const char *path, topo_model_t *model, agora_err_t *err);

/*
 * Serialize to JSON text (pretty).  Returns a malloc'd string the caller
 * frees, or NULL/ENOMEM.
 */
char *topo_model_to_json(const topo_model_t *model);

/* Append a copy of *n to the model.  0 or -1/ENOMEM. */
int topo_model_add(topo_model_t *model, const topo_node_t *n);

/*
 * Index of the node type whose "nodes" hostlist contains host; if none
 * matches and the model has exactly one type with an empty "nodes", that
 * one.  -1 if none.
 */
int topo_model_find(const topo_model_t *model, const char *host);

/*
 * The node-type rule every adapter uses (the auction in site_factor/agora
 * and the select wrapper see the same types): a node matched by the
 * model's hostlists with the GPU count its type says gets that type (its
 * index in the model); any other node gets the uniform type of its GPU
 * count, named "uniform-<g>", one socket (no model: the GPUs' socket
 * affinity is unknown, so no cross-socket penalty is assumed), appended to
 * *types after the model's types if it is not there yet.  *mismatch (may
 * be NULL) is set when the model names the node but with another GPU
 * count (the caller logs it).  *types holds the model's types first (the
 * caller copies them in); *cap is its capacity.  The type index, or -1
 * with errno ENOMEM (then *types is unchanged).
 */
int topo_model_node_type(const topo_model_t *model, pol_node_type_t **types,
			 int *n_types, size_t *cap, const char *host, int gpus,
			 bool *mismatch);
/* The same rule without appending: the index, or -1 if the uniform type
 * the node needs is not in types[0..n_types) yet. */
int topo_model_node_type_find(const topo_model_t *model,
			      const pol_node_type_t *types, int n_types,
			      const char *host, int gpus, bool *mismatch);

/*
 * Format a sorted int set as a Slurm range list ("0-3,8") into buf.
 * 0, or -1/ERANGE if it does not fit.
 */
int topo_format_ranges(const int *v, int n, char *buf, size_t len);

/*
 * Parse a range list "0-3,8" into v[] (at most max values, each in
 * [0, limit)).  Returns the count, or -1/EINVAL.
 */
int topo_parse_ranges(const char *s, int *v, int max, int limit);

#endif
