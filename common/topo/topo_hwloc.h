/*
 * topo_hwloc.h - derive a node type's GPU locality model from an hwloc
 * topology: GPU -> PCIe switch -> NUMA node -> socket, NVLink islands from
 * the "NVLinkBandwidth" distances matrix, and the cores local to each GPU.
 *
 * Works on XML (lstopo --of xml from the node) as well as on a live
 * topology: it walks PCI devices and OS devices and never calls the
 * NVML/CUDA helpers, which refuse topologies that are not "this system".
 *
 * A PCI device is a GPU when it is an NVIDIA (0x10de) display or 3D
 * controller (class 0x0300/0x0302), or when it carries a CUDA, NVML, RSMI,
 * LevelZero or OpenCL OS device.  GPU i is the i-th such device in PCI bus
 * order, which is the order of /dev/nvidiaN and NVML indices on Linux.
 *
 * The core never loads the local topology itself: the caller passes it
 * (contrib/topo does), so the core reads no machine state.
 */
#ifndef TOPO_HWLOC_H
#define TOPO_HWLOC_H

#include <stddef.h>

#include <hwloc.h>

#include "agora_err.h"
#include "topo_model.h"

/* An hwloc XML file is read whole (agora_file_read_ex(), links followed). */
#define TOPO_HWLOC_XML_MAX_BYTES ((size_t) 256 << 20)

/*
 * Set the filters we need (keep all bridges, PCI and OS devices) on a
 * topology that has been initialised but not loaded.  0 or -1/errno.
 */
int topo_hwloc_set_filters(hwloc_topology_t topo);

/*
 * Load an hwloc XML buffer (len bytes, need not be NUL-terminated) with
 * our filters.  name is used in errors ("name: not a valid hwloc XML").
 * Returns a loaded topology the caller destroys with
 * hwloc_topology_destroy(), or NULL with errno EINVAL and err set.
 */
hwloc_topology_t topo_hwloc_load_xml_buffer(const char *xml, size_t len,
					    const char *name, agora_err_t *err);

/* Same from a file path (errors name the path). */
hwloc_topology_t topo_hwloc_load_xml_file(const char *path, agora_err_t *err);

/*
 * Derive the model of a loaded topology into *out (fully overwritten).
 * name becomes out->type.name (truncated to POL_NAME_LEN - 1).  A topology
 * without GPUs gives n_gpus == 0 (not an error).  More than
 * POL_MAX_GPUS_PER_NODE GPUs: -1/ERANGE.  0 or -1/errno with err.
 */
int topo_hwloc_derive(hwloc_topology_t topo, const char *name, topo_node_t *out,
		      agora_err_t *err);

#endif
