/*
 * topo_hwloc.c - hwloc topology -> topo_node_t (see topo_hwloc.h).
 *
 * Modelled on flux-core's rhwloc.c: one place sets the filters, XML load
 * is separate from any local load, single-exit cleanup.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_file.h"
#include "topo_hwloc.h"

int topo_hwloc_set_filters(hwloc_topology_t topo)
{
	/* Keep every bridge: the PCIe switch is read off the bridge tree. */
	if (hwloc_topology_set_io_types_filter(topo,
					       HWLOC_TYPE_FILTER_KEEP_ALL) < 0)
		return -1;
	/* Caches and Groups are irrelevant here: keep loading cheap. */
	if (hwloc_topology_set_cache_types_filter(
		    topo, HWLOC_TYPE_FILTER_KEEP_NONE) < 0)
		return -1;
	return 0;
}

static int abi_ok(void)
{
	/* runtime library must have the major version we were built for */
	return (hwloc_get_api_version() >> 16) == (HWLOC_API_VERSION >> 16);
}

hwloc_topology_t topo_hwloc_load_xml_buffer(const char *xml, size_t len,
					    const char *name, agora_err_t *err)
{
	hwloc_topology_t topo = NULL;
	char *copy = NULL;
	int saved;

	if (!name)
		name = "(xml)";
	if (!abi_ok()) {
		agora_err_set(err,
			      "%s: hwloc runtime 0x%x does not match the "
			      "0x%x it was built with",
			      name, hwloc_get_api_version(), HWLOC_API_VERSION);
		errno = EINVAL;
		return NULL;
	}
	if (!xml || len == 0 || len > INT32_MAX - 1) {
		agora_err_set(err, "%s: empty hwloc XML", name);
		errno = EINVAL;
		return NULL;
	}
	/* hwloc wants the size including a terminating NUL */
	copy = malloc(len + 1);
	if (!copy) {
		agora_err_set(err, "%s: out of memory", name);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, xml, len);
	copy[len] = '\0';
	if (hwloc_topology_init(&topo) < 0) {
		agora_err_set(err, "%s: hwloc_topology_init failed", name);
		goto err;
	}
	if (topo_hwloc_set_filters(topo) < 0 ||
	    hwloc_topology_set_xmlbuffer(topo, copy, (int) len + 1) < 0 ||
	    hwloc_topology_load(topo) < 0) {
		agora_err_set(err,
			      "%s: not a valid hwloc XML topology "
			      "(export it with `lstopo --of xml` from hwloc "
			      "2.x; topology version 3.0 needs hwloc 3)",
			      name);
		goto err;
	}
	free(copy);
	return topo;
err:
	saved = errno;
	if (topo)
		hwloc_topology_destroy(topo);
	free(copy);
	errno = saved ? saved : EINVAL;
	if (errno != ENOMEM)
		errno = EINVAL;
	return NULL;
}

hwloc_topology_t topo_hwloc_load_xml_file(const char *path, agora_err_t *err)
{
	hwloc_topology_t topo;
	char *buf;
	size_t len;
	int saved;

	if (!path) {
		errno = EINVAL;
		agora_err_set(err, "(null): no XML file given");
		return NULL;
	}
	if (agora_file_read_ex(path, TOPO_HWLOC_XML_MAX_BYTES,
			       AGORA_FILE_FOLLOW, &buf, &len, NULL, err) < 0)
		return NULL;
	topo = topo_hwloc_load_xml_buffer(buf, len, path, err);
	saved = errno;
	free(buf);
	errno = saved;
	return topo;
}

/* ---- derivation ------------------------------------------------------ */

static int is_gpu_osdev(hwloc_obj_t o)
{
	static const char *const subtypes[] = { "CUDA", "NVML", "RSMI",
						"LevelZero", "OpenCL" };
	size_t i;

	if (o->type != HWLOC_OBJ_OS_DEVICE || !o->subtype)
		return 0;
	if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
	    o->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
		return 0;
	for (i = 0; i < sizeof(subtypes) / sizeof(subtypes[0]); i++)
		if (!strcmp(o->subtype, subtypes[i]))
			return 1;
	return 0;
}

/* The GPU's preferred OS device name: nvml, then cuda, then any. */
static const char *gpu_osdev_name(hwloc_obj_t pci)
{
	hwloc_obj_t c, any = NULL, cuda = NULL;

	for (c = pci->io_first_child; c; c = c->next_sibling) {
		if (!is_gpu_osdev(c) || !c->name)
			continue;
		if (!strcmp(c->subtype, "NVML") || !strcmp(c->subtype, "RSMI"))
			return c->name;
		if (!strcmp(c->subtype, "CUDA") && !cuda)
			cuda = c;
		if (!any)
			any = c;
	}
	return cuda ? cuda->name : any ? any->name : NULL;
}

static int is_gpu_pcidev(hwloc_obj_t pci)
{
	unsigned cls = pci->attr->pcidev.class_id;
	hwloc_obj_t c;

	if (pci->attr->pcidev.vendor_id == 0x10de &&
	    (cls == 0x0300 || cls == 0x0302))
		return 1;
	for (c = pci->io_first_child; c; c = c->next_sibling)
		if (is_gpu_osdev(c))
			return 1;
	return 0;
}

static int is_pci_pci_bridge(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_BRIDGE &&
	       o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

/*
 * The topmost PCI-to-PCI bridge above a device (below its host bridge),
 * i.e. the root port.  Two GPUs sharing it are behind the same PCIe
 * switch: their common ancestor is a PCI bridge, not the host bridge
 * (nvidia-smi topo calls that PIX/PXB).
 */
static hwloc_obj_t top_pci_bridge(hwloc_obj_t dev)
{
	hwloc_obj_t o, top = NULL;

	for (o = dev->parent; o && o->type == HWLOC_OBJ_BRIDGE; o = o->parent)
		if (is_pci_pci_bridge(o))
			top = o;
	return top;
}

/* PCI bus order: domain, bus, device, function. */
static int pci_cmp(hwloc_obj_t a, hwloc_obj_t b)
{
	const struct hwloc_pcidev_attr_s *x = &a->attr->pcidev;
	const struct hwloc_pcidev_attr_s *y = &b->attr->pcidev;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return 0;
}

/*
 * hwloc_get_next_pcidev() walks the topology tree (package by package,
 * bridge by bridge), which is not bus order when a host bridge holds
 * several root ports: sort, so that GPU i is the i-th in bus order.
 */
static void sort_pci_order(hwloc_obj_t *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		hwloc_obj_t o = v[i];

		for (j = i; j > 0 && pci_cmp(v[j - 1], o) > 0; j--)
			v[j] = v[j - 1];
		v[j] = o;
	}
}

/* Union-find over small index sets. */
static int uf_find(int *p, int x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static void uf_union(int *p, int a, int b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a < b)
		p[b] = a;
	else if (b < a)
		p[a] = b;
}

/* GPU index of a distances-matrix object, or -1. */
static int gpu_of_obj(hwloc_obj_t o, hwloc_obj_t *gpus, int n)
{
	int i;

	while (o && o->type == HWLOC_OBJ_OS_DEVICE)
		o = o->parent;
	for (i = 0; o && i < n; i++)
		if (gpus[i] == o)
			return i;
	return -1;
}

/*
 * NVLink islands: connected components of the NVLinkBandwidth graph
 * (value > 0 between two distinct objects).  Non-GPU objects (NVSwitch
 * PCI devices in heterogeneous matrices) join components too, so GPUs
 * linked through an NVSwitch form one island.
 */
static int derive_islands(hwloc_topology_t topo, hwloc_obj_t *gpus, int n,
			  topo_node_t *out)
{
	struct hwloc_distances_s *dist[8];
	unsigned nr = 8, k, i, j;
	int par[POL_MAX_GPUS_PER_NODE], g;

	for (g = 0; g < n; g++)
		par[g] = g;
	if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, dist, 0) <
	    0)
		nr = 0;
	if (nr > 8)
		nr = 8;
	for (k = 0; k < nr; k++) {
		struct hwloc_distances_s *d = dist[k];
		int *op = malloc(sizeof(int) * (d->nbobjs ? d->nbobjs : 1));
		int *gi = malloc(sizeof(int) * (d->nbobjs ? d->nbobjs : 1));

		if (!op || !gi) {
			free(op);
			free(gi);
			for (; k < nr; k++)
				hwloc_distances_release(topo, dist[k]);
			errno = ENOMEM;
			return -1;
		}
		for (i = 0; i < d->nbobjs; i++) {
			op[i] = (int) i;
			gi[i] = gpu_of_obj(d->objs[i], gpus, n);
		}
		for (i = 0; i < d->nbobjs; i++)
			for (j = 0; j < d->nbobjs; j++)
				if (i != j && d->values[i * d->nbobjs + j] > 0)
					uf_union(op, (int) i, (int) j);
		/* GPUs in one component -> one island */
		for (i = 0; i < d->nbobjs; i++) {
			if (gi[i] < 0)
				continue;
			for (j = i + 1; j < d->nbobjs; j++)
				if (gi[j] >= 0 && uf_find(op, (int) i) ==
							  uf_find(op, (int) j))
					uf_union(par, gi[i], gi[j]);
		}
		free(op);
		free(gi);
		hwloc_distances_release(topo, d);
	}
	for (g = 0; g < n; g++)
		out->gpu[g].island = uf_find(par, g);
	return 0;
}

int topo_hwloc_derive(hwloc_topology_t topo, const char *name, topo_node_t *out,
		      agora_err_t *err)
{
	hwloc_obj_t gpus[POL_MAX_GPUS_PER_NODE];
	hwloc_obj_t pci = NULL, root;
	topo_node_t *n;
	uint64_t sw_gp[POL_MAX_GPUS_PER_NODE];
	int n_sw = 0, n_gpus = 0, g, depth;

	if (!topo || !out) {
		errno = EINVAL;
		agora_err_set(err, "topology: missing argument");
		return -1;
	}
	if (!name)
		name = "";
	n = calloc(1, sizeof(*n));
	if (!n) {
		agora_err_set(err, "%s: out of memory", name);
		errno = ENOMEM;
		return -1;
	}
	while ((pci = hwloc_get_next_pcidev(topo, pci))) {
		if (!is_gpu_pcidev(pci))
			continue;
		if (n_gpus == POL_MAX_GPUS_PER_NODE) {
			agora_err_set(err, "%s: more than %d GPUs", name,
				      POL_MAX_GPUS_PER_NODE);
			free(n);
			errno = ERANGE;
			return -1;
		}
		gpus[n_gpus++] = pci;
	}
	sort_pci_order(gpus, n_gpus);
	snprintf(n->type.name, sizeof(n->type.name), "%s", name);
	n->type.n_gpus = n_gpus;
	depth = hwloc_get_type_depth(topo, HWLOC_OBJ_PACKAGE);
	n->type.n_sockets = depth < 0 ? 1
				      : (int) hwloc_get_nbobjs_by_depth(
						topo, (unsigned) depth);
	if (n->type.n_sockets < 1)
		n->type.n_sockets = 1;
	n->type.cpus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	n->n_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	root = hwloc_get_root_obj(topo);
	n->type.mem_mb = (int64_t) (root->total_memory >> 20);

	for (g = 0; g < n_gpus; g++) {
		topo_gpu_t *tg = &n->gpu[g];
		hwloc_obj_t dev = gpus[g], nonio, pkg, br, core = NULL;
		const char *on = gpu_osdev_name(dev);
		int cores[4096], nc = 0, s;

		snprintf(tg->name, sizeof(tg->name), "%s", on ? on : "");
		snprintf(tg->pci_busid, sizeof(tg->pci_busid),
			 "%04x:%02x:%02x.%01x", dev->attr->pcidev.domain,
			 dev->attr->pcidev.bus, dev->attr->pcidev.dev,
			 dev->attr->pcidev.func);
		nonio = hwloc_get_non_io_ancestor_obj(topo, dev);
		pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE,
						     nonio);
		if (!pkg && nonio && nonio->type == HWLOC_OBJ_PACKAGE)
			pkg = nonio;
		tg->socket = pkg ? (int) pkg->logical_index : -1;
		tg->numa = -1;
		if (nonio && nonio->nodeset &&
		    hwloc_bitmap_weight(nonio->nodeset) == 1)
			tg->numa = hwloc_bitmap_first(nonio->nodeset);
		br = top_pci_bridge(dev);
		tg->pcie_switch = -1;
		if (br) {
			for (s = 0; s < n_sw; s++)
				if (sw_gp[s] == br->gp_index)
					break;
			if (s == n_sw)
				sw_gp[n_sw++] = br->gp_index;
			tg->pcie_switch = s;
		}
		/* Cores= wants Slurm's logical core index: hwloc's order */
		while (nonio && nonio->cpuset &&
		       (core = hwloc_get_next_obj_inside_cpuset_by_type(
				topo, nonio->cpuset, HWLOC_OBJ_CORE, core)) &&
		       nc < 4096)
			cores[nc++] = (int) core->logical_index;
		if (nonio == root)
			nc = 0; /* attached to the machine: no locality */
		if (topo_format_ranges(cores, nc, tg->cores,
				       sizeof(tg->cores)) < 0) {
			agora_err_set(err, "%s: GPU %d: core list too long",
				      name, g);
			free(n);
			errno = ERANGE;
			return -1;
		}
	}
	if (derive_islands(topo, gpus, n_gpus, n) < 0) {
		agora_err_set(err, "%s: out of memory", name);
		free(n);
		return -1;
	}
	topo_node_derive_levels(n);
	*out = *n;
	free(n);
	return 0;
}
