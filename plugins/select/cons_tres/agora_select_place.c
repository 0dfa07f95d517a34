/*
 * agora_select_place.c - Agora GPU placement inside the node-choice hook.
 * See agora_select_place.h; the reasoning is in doc/select.md section 4.
 *
 * Memory: the core (pol_*, topo_*) allocates with malloc and frees its own
 * objects (pol_cluster_destroy, pol_topo_place_destroy, topo_model_free,
 * pol_alloc_free); this file uses xmalloc only for what it hands to Slurm
 * code (log strings).  Nothing crosses.
 */
#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src/common/bitstring.h"
#include AGORA_INC_GRES
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include AGORA_INC_TOPOLOGY
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_CONS

#include "agora_conf.h"
#include "pol_model.h"
#include "pol_topo_place.h"
#include "topo_model.h"

#include "agora_select.h"
#include "agora_gres.h"
#include "agora_leaves.h"
#include "agora_slurm_conf.h"
#include "agora_select_place.h"
#include "agora_select_place_int.h"
#include "agora_ctld_weak.h"

static pthread_mutex_t place_lock = PTHREAD_MUTEX_INITIALIZER;

/* configuration (place_lock) */
static bool conf_loaded = false;
static agora_placement_t placement = AGORA_PLACEMENT_STOCK;
static char *model_path = NULL;          /* xmalloc */
static topo_model_t model = { NULL, 0 }; /* core memory */

/* the cluster as the placer sees it, rebuilt when stale (place_lock) */
static pol_cluster_t *cluster = NULL;
static pol_topo_place_t *placer = NULL;
static pol_gpumask_t *free_masks = NULL; /* malloc, n_nodes */
static bool cluster_stale = true;
static int cluster_node_cnt = -1;
static int cluster_switch_cnt = -1;
static int cluster_n_model = 0; /* nodes typed from the model */

/*
 * What agora.conf and the model file looked like when they were last read
 * (successfully or not).  select_p_reconfigure() runs under slurmctld's
 * write locks for every partition create/update/delete, every
 * "scontrol setdebugflags" and every dynamic node change, not only for
 * "scontrol reconfigure"; re-reading is skipped while these are unchanged.
 * Serialised by load_lock (slurmctld also holds its config write lock).
 */
typedef struct {
	bool exists;
	int err; /* errno of stat() when !exists */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
} file_id_t;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tried = false;       /* a load was attempted (load_lock) */
static char *tried_conf = NULL;  /* agora.conf path read (xmalloc) */
static char *tried_model = NULL; /* model path it named (xmalloc) */
static file_id_t tried_conf_id, tried_model_id;
static unsigned long n_loads = 0, n_skips = 0;
/* node table signature the cluster was built from (place_lock) */
static uint64_t cluster_sig = 0;

static void file_id_get(const char *path, file_id_t *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (!path)
		return;
	if (stat(path, &st)) {
		id->err = errno;
		return;
	}
	id->exists = true;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	id->ctime = st.st_ctim;
}

static bool file_id_eq(const file_id_t *a, const file_id_t *b)
{
	if (a->exists != b->exists)
		return false;
	if (!a->exists)
		return a->err == b->err;
	return (a->dev == b->dev) && (a->ino == b->ino) &&
	       (a->size == b->size) && (a->mtime.tv_sec == b->mtime.tv_sec) &&
	       (a->mtime.tv_nsec == b->mtime.tv_nsec) &&
	       (a->ctime.tv_sec == b->ctime.tv_sec) &&
	       (a->ctime.tv_nsec == b->ctime.tv_nsec);
}

static void cluster_drop(void)
{
	pol_topo_place_destroy(&placer);
	pol_cluster_destroy(&cluster);
	free(free_masks);
	free_masks = NULL;
	cluster_stale = true;
}

/* Read agora.conf and the model.  load_lock. */
static void load_conf(const char *when, char *path)
{
	agora_conf_t conf;
	topo_model_t m = { NULL, 0 };
	agora_err_t err = { { 0 } };
	bool found = true;

	/*
	 * Identities first: a file changed between stat() and read() looks
	 * changed at the next check and is read again then.
	 */
	tried = true;
	n_loads++;
	xfree(tried_conf);
	tried_conf = xstrdup(path);
	xfree(tried_model);
	file_id_get(path, &tried_conf_id);
	memset(&tried_model_id, 0, sizeof(tried_model_id));

	switch (agora_slurm_conf_load(&conf, NULL, &err)) {
	case -1:
		error("%s: rejected %s, keeping the previous placement configuration (%s): %s",
		      when, path,
		      conf_loaded ? agora_placement_name(placement) : "stock",
		      err.text);
		goto out;
	case 1:
		found = false;
		break;
	}
	if (conf.topology_model) {
		tried_model = xstrdup(conf.topology_model);
		file_id_get(tried_model, &tried_model_id);
	}
	if (conf.topology_model &&
	    topo_model_load(conf.topology_model, &m, &err)) {
		error("%s: TopologyModel rejected, keeping the previous placement configuration (%s): %s",
		      when,
		      conf_loaded ? agora_placement_name(placement) : "stock",
		      err.text);
		goto out;
	}

	pthread_mutex_lock(&place_lock);
	topo_model_free(&model);
	model = m;
	m.types = NULL;
	m.n_types = 0;
	placement = conf.placement;
	xfree(model_path);
	if (conf.topology_model)
		model_path = xstrdup(conf.topology_model);
	conf_loaded = true;
	cluster_drop();
	info("%s: Placement=%s TopologyModel=%s (%d node types)%s", when,
	     agora_placement_name(placement),
	     model_path ? model_path : "(none)", model.n_types,
	     found ? "" : " (no agora.conf: defaults)");
	pthread_mutex_unlock(&place_lock);
out:
	topo_model_free(&m);
	agora_conf_free(&conf);
}

extern void agora_place_load_conf(const char *when)
{
	char name[] = "agora.conf";
	char *path = get_extra_conf_path(name);

	pthread_mutex_lock(&load_lock);
	load_conf(when, path);
	pthread_mutex_unlock(&load_lock);
	xfree(path);
}

/*
 * A cheap signature of what cluster_build() reads from Slurm: node names,
 * GPU counts and the leaf switches.  place_lock.
 */
static uint64_t node_table_sig(void)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	bitstr_t **sw = NULL;
	int i, s, n_sw;

#define SIG_MIX(v) (h = (h ^ (uint64_t) (v)) * 1099511628211ULL)
	SIG_MIX(node_record_count);
	for (i = 0; i < node_record_count; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];
		const char *p;

		SIG_MIX(0xff);
		if (!node_ptr || !node_ptr->name)
			continue;
		for (p = node_ptr->name; *p; p++)
			SIG_MIX((unsigned char) *p);
		SIG_MIX(agora_node_gpus(node_ptr, NULL));
	}
	SIG_MIX(agora_switch_count());
	n_sw = agora_leaf_switches(&sw);
	for (s = 0; s < n_sw; s++) {
		SIG_MIX(0xfe);
		for (i = 0; i < bit_size(sw[s]); i++)
			if (bit_test(sw[s], i))
				SIG_MIX(i);
	}
	agora_leaf_switches_free(sw, n_sw);
#undef SIG_MIX
	return h;
}

extern bool agora_place_reconfigure(void)
{
	char name[] = "agora.conf";
	char *path = get_extra_conf_path(name);
	file_id_t c, m;
	bool reload;

	pthread_mutex_lock(&load_lock);
	file_id_get(path, &c);
	file_id_get(tried_model, &m);
	reload = !tried || xstrcmp(path, tried_conf) ||
		 !file_id_eq(&c, &tried_conf_id) ||
		 !file_id_eq(&m, &tried_model_id);
	if (reload) {
		load_conf("reconfigure", path);
	} else {
		n_skips++;
		/* the node table may have changed (reconfigure, dynamic nodes) */
		pthread_mutex_lock(&place_lock);
		if (cluster && (node_table_sig() != cluster_sig)) {
			cluster_drop();
			log_flag(
				SELECT_TYPE,
				"agora placement: node table changed, cluster rebuilt at the next placement");
		}
		pthread_mutex_unlock(&place_lock);
		log_flag(
			SELECT_TYPE,
			"reconfigure: %s and TopologyModel unchanged, not re-read (%lu loads, %lu skipped)",
			path, n_loads, n_skips);
	}
	pthread_mutex_unlock(&load_lock);
	xfree(path);
	return reload;
}

extern void agora_place_fini(void)
{
	pthread_mutex_lock(&load_lock);
	tried = false;
	xfree(tried_conf);
	xfree(tried_model);
	pthread_mutex_unlock(&load_lock);
	pthread_mutex_lock(&place_lock);
	cluster_drop();
	topo_model_free(&model);
	xfree(model_path);
	conf_loaded = false;
	placement = AGORA_PLACEMENT_STOCK;
	pthread_mutex_unlock(&place_lock);
}

/* ---- the cluster ---------------------------------------------------- */

extern bool agora_place_is_gpu(const gres_state_t *gs)
{
	return gs && gs->gres_name && !xstrcmp(gs->gres_name, "gpu");
}

/* Build cluster, placer and free_masks for the node table.  place_lock. */
static int cluster_build(void)
{
	pol_cluster_t *c;
	int i, n = node_record_count;
	size_t cap;
	bool mismatch;

	cluster_drop();
	cluster_n_model = 0;
	if (n <= 0)
		return -1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -1;
	snprintf(c->name, sizeof(c->name), "%s",
		 slurm_conf.cluster_name ? slurm_conf.cluster_name : "slurm");
	cap = (size_t) model.n_types + 4;
	c->types = calloc(cap, sizeof(*c->types));
	c->nodes = calloc((size_t) n, sizeof(*c->nodes));
	free_masks = calloc((size_t) n, sizeof(*free_masks));
	if (!c->types || !c->nodes || !free_masks)
		goto nomem;
	for (i = 0; i < model.n_types; i++)
		c->types[i] = model.types[i].type;
	c->n_types = model.n_types;
	c->n_nodes = n;
	for (i = 0; i < n; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];
		pol_node_t *nd = &c->nodes[i];
		int g = 0, t = -1;

		nd->pool = POL_POOL_TRAINING;
		if (!node_ptr || !node_ptr->name) {
			/* a hole in the node table: never a candidate */
			if ((nd->type = topo_model_node_type(
				     &model, &c->types, &c->n_types, &cap, NULL,
				     0, NULL)) < 0)
				goto nomem;
			continue;
		}
		snprintf(nd->name, sizeof(nd->name), "%s", node_ptr->name);
		g = agora_node_gpus(node_ptr, NULL);
		/* the node-type rule shared with Agora's pass (topo_model.h) */
		t = topo_model_node_type(&model, &c->types, &c->n_types, &cap,
					 node_ptr->name, g, &mismatch);
		if (mismatch)
			error("node %s has %d GPUs but TopologyModel says otherwise; using a uniform type for it",
			      node_ptr->name, g);
		else if (t >= 0 && t < model.n_types)
			cluster_n_model++;
		if (t < 0)
			goto nomem;
		nd->type = t;
		nd->up = true;
		nd->weight = node_ptr->config_ptr
				     ? (int) MIN(node_ptr->config_ptr->weight,
						 INT32_MAX)
				     : 0;
	}
	agora_set_leaves(c, NULL);
	placer = pol_topo_place_create(c, NULL);
	if (!placer)
		goto nomem;
	cluster = c;
	cluster_sig = node_table_sig();
	cluster_stale = false;
	cluster_node_cnt = n;
	cluster_switch_cnt = agora_switch_count();
	log_flag(
		SELECT_TYPE,
		"agora placement: cluster of %d nodes, %d node types (%d nodes typed by the model), %d leaves",
		n, c->n_types, cluster_n_model, c->n_leaves);
	return 0;
nomem:
	pol_cluster_destroy(&c);
	free(free_masks);
	free_masks = NULL;
	error("out of memory building the placement cluster");
	return -1;
}

/* ---- one decision --------------------------------------------------- */

/*
 * The GPUs of node n free for this job: the bits cons_tres found usable
 * (sock_gres bits, built from the node usage this test runs on, i.e. the
 * future state in WILL_RUN) minus the bits allocated there.
 */
static pol_gpumask_t node_free_mask(avail_res_t *ar, int n_gpus, List live_gres)
{
	ListIterator it;
	sock_gres_t *sg;
	pol_gpumask_t m = 0, shared = 0;

	if (!ar || !ar->sock_gres_list || ar->avail_cpus < 1)
		return 0;
	it = list_iterator_create(ar->sock_gres_list);
	while ((sg = list_next(it))) {
		bitstr_t *alloc = NULL;
		pol_gpumask_t bits = 0;
		int s, g;

		if (!agora_place_is_gpu(sg->gres_state_job) &&
		    !agora_place_is_gpu(sg->gres_state_node))
			continue;
		if (sg->gres_state_node && sg->gres_state_node->gres_data) {
			gres_node_state_t *ns = sg->gres_state_node->gres_data;

			if (!ns->no_consume)
				alloc = ns->gres_bit_alloc;
			/* and the GPUs shard/MPS jobs hold (agora_gres.h) */
			shared |= agora_gres_shared_held(ns, live_gres, n_gpus);
		}
		for (g = 0; g < n_gpus; g++) {
			bool set = false;

			if (sg->bits_any_sock &&
			    g < bit_size(sg->bits_any_sock) &&
			    bit_test(sg->bits_any_sock, g))
				set = true;
			for (s = 0;
			     !set && sg->bits_by_sock && s < sg->sock_cnt; s++)
				if (sg->bits_by_sock[s] &&
				    g < bit_size(sg->bits_by_sock[s]) &&
				    bit_test(sg->bits_by_sock[s], g))
					set = true;
			if (set && alloc && g < bit_size(alloc) &&
			    bit_test(alloc, g))
				set = false;
			if (set)
				bits |= (pol_gpumask_t) 1 << g;
		}
		m |= bits;
	}
	list_iterator_destroy(it);
	return m & ~shared;
}

/*
 * The job's GPU request as a placement request.  0, or -1 with why filled
 * (no GPUs, per-task/per-socket GPUs, several GPU types).
 */
static int job_request(job_record_t *job_ptr, uint32_t min_nodes,
		       pol_place_req_t *req, char *why, size_t len)
{
	gres_job_state_t *js = NULL;
	ListIterator it;
	gres_state_t *gs;
	int n_gpu = 0;

	memset(req, 0, sizeof(*req));
	req->pool = POL_POOL_TRAINING;
	if (!job_ptr->gres_list_req) {
		snprintf(why, len, "no GPU request");
		return -1;
	}
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it)))
		if (agora_place_is_gpu(gs) && gs->gres_data) {
			js = gs->gres_data;
			n_gpu++;
		}
	list_iterator_destroy(it);
	if (!js) {
		snprintf(why, len, "no GPU request");
		return -1;
	}
	if (n_gpu > 1) {
		snprintf(why, len, "several GPU types requested");
		return -1;
	}
	if (js->gres_per_task || js->gres_per_socket) {
		snprintf(why, len, "GPUs per task/socket: stock decides");
		return -1;
	}
	if (min_nodes < 1)
		min_nodes = 1;
	if (js->gres_per_node) {
		if (js->gres_per_node > POL_MAX_GPUS_PER_NODE) {
			snprintf(why, len, "too many GPUs per node");
			return -1;
		}
		req->nodes = (int) min_nodes;
		req->gpus_per_node = (int) js->gres_per_node;
		snprintf(why, len, "%dx%d", req->nodes, req->gpus_per_node);
		return 0;
	}
	if (js->gres_per_job) {
		if (js->gres_per_job > INT32_MAX / 2) {
			snprintf(why, len, "too many GPUs");
			return -1;
		}
		if ((min_nodes > 1) && (js->gres_per_job % min_nodes)) {
			/* the placer would put it on fewer nodes */
			snprintf(why, len,
				 "--gpus not a multiple of -N: stock decides");
			return -1;
		}
		if (min_nodes > 1) {
			req->nodes = (int) min_nodes;
			req->gpus_per_node = (int) (js->gres_per_job /
						    min_nodes);
			snprintf(why, len, "%dx%d", req->nodes,
				 req->gpus_per_node);
		} else {
			req->total_gpus = (int) js->gres_per_job;
			snprintf(why, len, "total %d", req->total_gpus);
		}
		return 0;
	}
	snprintf(why, len, "no GPU count");
	return -1;
}

static bool has_required_nodes(job_record_t *job_ptr, bitstr_t *node_map)
{
	bitstr_t *req = job_ptr->details ? job_ptr->details->req_node_bitmap
					 : NULL;

	return req && (bit_set_count(req) > 0) && node_map &&
	       (bit_size(req) == bit_size(node_map));
}

extern agora_place_rc_t agora_place_narrow(job_record_t *job_ptr,
					   bitstr_t *node_map,
					   avail_res_t **avail_res_array,
					   uint32_t min_nodes,
					   agora_place_out_t *out)
{
	pol_place_req_t req;
	pol_alloc_t alloc = { NULL, 0 };
	agora_place_rc_t rc = AGORA_PLACE_SKIP;
	bitstr_t *keep = NULL;
	int64_t i, len;
	int p, ncand = 0;

	memset(out, 0, sizeof(*out));
	if (!job_ptr || !node_map || !avail_res_array) {
		snprintf(out->why, sizeof(out->why), "no input");
		return AGORA_PLACE_SKIP;
	}
	pthread_mutex_lock(&place_lock);
	if (!conf_loaded || placement != AGORA_PLACEMENT_AGORA) {
		snprintf(out->why, sizeof(out->why), "Placement=stock");
		goto out;
	}
	if (job_request(job_ptr, min_nodes, &req, out->why, sizeof(out->why)))
		goto out;
	if (has_required_nodes(job_ptr, node_map)) {
		snprintf(out->why, sizeof(out->why),
			 "required nodes: stock decides");
		goto out;
	}
	if (cluster_stale || !cluster ||
	    (cluster_node_cnt != node_record_count) ||
	    (cluster_switch_cnt != agora_switch_count())) {
		if (cluster_build()) {
			snprintf(out->why, sizeof(out->why),
				 "no placement cluster");
			goto out;
		}
	}

	len = bit_size(node_map);
	if (len > cluster->n_nodes)
		len = cluster->n_nodes;
	memset(free_masks, 0, sizeof(*free_masks) * (size_t) cluster->n_nodes);
	for (i = 0; i < len; i++) {
		pol_node_t *nd = &cluster->nodes[i];
		node_record_t *node_ptr = node_record_table_ptr[i];

		if (!bit_test(node_map, i))
			continue;
		free_masks[i] = node_free_mask(
			avail_res_array[i], cluster->types[nd->type].n_gpus,
			node_ptr ? node_ptr->gres_list : NULL);
		if (free_masks[i])
			ncand++;
		/* node Weight can change with scontrol update */
		if (node_ptr && node_ptr->config_ptr)
			nd->weight = (int) MIN(node_ptr->config_ptr->weight,
					       INT32_MAX);
	}
	if (!ncand) {
		snprintf(out->why, sizeof(out->why),
			 "no candidate has a free GPU");
		goto out;
	}
	if (pol_topo_place_req(placer, cluster, free_masks, &req, &alloc,
			       &out->score)) {
		size_t l = strlen(out->why);

		snprintf(out->why + l, sizeof(out->why) - l,
			 ": no placement (%s)",
			 errno == ENOSPC ? "does not fit" : "error");
		goto out;
	}
	out->level = (int) pol_alloc_level(cluster, &alloc);

	keep = bit_alloc(bit_size(node_map));
	for (p = 0; p < alloc.n_parts; p++) {
		int nd = alloc.parts[p].node;

		if (nd < 0 || nd >= len || !bit_test(node_map, nd))
			continue; /* cannot happen: free mask was 0 */
		bit_set(keep, nd);
		xstrfmtcat(out->chosen, "%s%s[0x%" PRIx64 "]",
			   out->chosen ? "," : "", cluster->nodes[nd].name,
			   (uint64_t) alloc.parts[p].gpus);
	}
	if (bit_set_count(keep) == 0) {
		snprintf(out->why, sizeof(out->why), "empty placement");
		goto out;
	}
	/* node_map &= keep: never sets a bit */
	out->cleared = (uint32_t) (bit_set_count(node_map) -
				   bit_overlap(node_map, keep));
	bit_and(node_map, keep);
	rc = AGORA_PLACE_NARROWED;
out:
	pthread_mutex_unlock(&place_lock);
	FREE_NULL_BITMAP(keep);
	pol_alloc_free(&alloc);
	return rc;
}

/* ---- shared with agora_select_gpuidx.c (agora_select_place_int.h) -- */

extern bool agora_place_begin(agora_place_ctx_t *ctx)
{
	pthread_mutex_lock(&place_lock);
	if (!conf_loaded || (placement != AGORA_PLACEMENT_AGORA))
		return false;
	if (cluster_stale || !cluster ||
	    (cluster_node_cnt != node_record_count) ||
	    (cluster_switch_cnt != agora_switch_count())) {
		if (cluster_build())
			return false;
	}
	ctx->cluster = cluster;
	ctx->placer = placer;
	ctx->free_masks = free_masks;
	return true;
}

extern void agora_place_end(void)
{
	pthread_mutex_unlock(&place_lock);
}
