/*
 * topo_conf.c - gres.conf / topology.conf text (see topo_conf.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agora_mem.h"
#include "topo_conf.h"
#include "topo_hostlist.h"

int topo_link_value(pol_level_t level)
{
	switch (level) {
	case POL_LVL_NVLINK:
		return TOPO_LINK_NVLINK;
	case POL_LVL_PCIE:
		return TOPO_LINK_PCIE;
	case POL_LVL_SOCKET:
		return TOPO_LINK_SOCKET;
	case POL_LVL_NODE:
		return TOPO_LINK_NODE;
	default:
		return 0;
	}
}

typedef struct sbuf {
	char *s;
	size_t len, cap;
	int failed;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_add(sbuf_t *b, const char *fmt, ...)
{
	va_list ap;
	size_t need;
	int w;

	if (b->failed)
		return;
	va_start(ap, fmt);
	w = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (w < 0) {
		b->failed = 1;
		return;
	}
	need = b->len + (size_t) w + 1;
	if (agora_grow((void **) &b->s, &b->cap, need, 1)) {
		b->failed = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t) w;
}

static char *sb_done(sbuf_t *b, agora_err_t *err)
{
	if (b->failed || !b->s) {
		free(b->s);
		agora_err_set(err, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	return b->s;
}

char *topo_gres_conf(const topo_node_t *n, const char *nodename,
		     const char *file_prefix, const char *type,
		     agora_err_t *err)
{
	sbuf_t b = { 0 };
	int i, j;

	if (!n) {
		errno = EINVAL;
		agora_err_set(err, "gres.conf: no node type");
		return NULL;
	}
	if (!nodename || !*nodename)
		nodename = n->nodes[0] ? n->nodes : n->type.name;
	if (!file_prefix)
		file_prefix = "/dev/nvidia";
	if (strpbrk(nodename, " \t\n=") || strpbrk(file_prefix, " \t\n") ||
	    (type && strpbrk(type, " \t\n=:"))) {
		errno = EINVAL;
		agora_err_set(err, "gres.conf: node name, File prefix or Type "
				   "contains blanks or '='");
		return NULL;
	}
	sb_add(&b,
	       "# gres.conf for node type '%s' (%d GPUs), written by "
	       "agora-topo.\n# Links tiers: NVLink=%d, same PCIe switch=%d, "
	       "same socket=%d, across sockets=%d (doc/topology.md).\n",
	       n->type.name, n->type.n_gpus, TOPO_LINK_NVLINK, TOPO_LINK_PCIE,
	       TOPO_LINK_SOCKET, TOPO_LINK_NODE);
	if (n->type.n_gpus == 0)
		sb_add(&b, "# (no GPU found)\n");
	for (i = 0; i < n->type.n_gpus; i++) {
		sb_add(&b, "NodeName=%s Name=gpu", nodename);
		if (type && *type)
			sb_add(&b, " Type=%s", type);
		sb_add(&b, " File=%s%d", file_prefix, i);
		if (n->gpu[i].cores[0])
			sb_add(&b, " Cores=%s", n->gpu[i].cores);
		sb_add(&b, " Links=");
		for (j = 0; j < n->type.n_gpus; j++)
			sb_add(&b, "%s%d", j ? "," : "",
			       i == j ? -1
				      : topo_link_value((pol_level_t) n->type
								.level[i][j]));
		sb_add(&b, "\n");
	}
	return sb_done(&b, err);
}

/* value of key= in a gres.conf line (case-insensitive key), or NULL */
static int line_get(const char *line, const char *key, char *val, size_t len)
{
	const char *p = line;
	size_t kl = strlen(key);

	while (*p) {
		const char *e;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		e = p;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		if ((size_t) (e - p) > kl && !strncasecmp(p, key, kl) &&
		    p[kl] == '=') {
			size_t vl = (size_t) (e - p) - kl - 1;

			if (vl >= len)
				return -1;
			memcpy(val, p + kl + 1, vl);
			val[vl] = '\0';
			return 1;
		}
		p = e;
	}
	return 0;
}

int topo_gres_count_gpus(const char *text, const char *name, const char *host,
			 agora_err_t *err)
{
	const char *p = text;
	int lineno = 0, total = 0;
	char line[4096], v[2048];

	if (!name)
		name = "gres.conf";
	if (!text || !host) {
		errno = EINVAL;
		agora_err_set(err, "%s: missing argument", name);
		return -1;
	}
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t) (e - p) : strlen(p);
		char *hash;
		int r, cnt;

		lineno++;
		if (len >= sizeof(line)) {
			agora_err_set(err, "%s:%d: line too long", name,
				      lineno);
			errno = EINVAL;
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (e ? 1 : 0);
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		r = line_get(line, "Name", v, sizeof(v));
		if (r <= 0 || strcasecmp(v, "gpu"))
			continue;
		r = line_get(line, "NodeName", v, sizeof(v));
		if (r < 0) {
			agora_err_set(err, "%s:%d: NodeName too long", name,
				      lineno);
			errno = EINVAL;
			return -1;
		}
		if (r == 1) {
			int in = topo_hostlist_contains(v, host);

			if (in < 0) {
				agora_err_set(err,
					      "%s:%d: NodeName: bad "
					      "hostlist '%s'",
					      name, lineno, v);
				errno = EINVAL;
				return -1;
			}
			if (!in)
				continue;
		}
		if (line_get(line, "Count", v, sizeof(v)) == 1) {
			char *end;
			long c = strtol(v, &end, 10);

			errno = 0;
			if (end == v || *end || errno || c < 0 || c > 1 << 20) {
				agora_err_set(err,
					      "%s:%d: Count: bad value "
					      "'%s'",
					      name, lineno, v);
				errno = EINVAL;
				return -1;
			}
			cnt = (int) c;
		} else if (line_get(line, "File", v, sizeof(v)) == 1) {
			long c = topo_hostlist_count(v);

			if (c < 0) {
				agora_err_set(err,
					      "%s:%d: File: bad device "
					      "list '%s'",
					      name, lineno, v);
				errno = EINVAL;
				return -1;
			}
			cnt = (int) c;
		} else if (line_get(line, "AutoDetect", v, sizeof(v)) == 1) {
			continue;
		} else {
			cnt = 1;
		}
		/* a node's GPUs, summed over its lines: capped as one
		 * line's Count is, so the sum stays an int */
		if (cnt > (1 << 20) - total) {
			agora_err_set(
				err,
				"%s:%d: more than %d GPUs on one node in all",
				name, lineno, 1 << 20);
			errno = EINVAL;
			return -1;
		}
		total += cnt;
	}
	return total;
}

int topo_gres_check(const topo_model_t *model, const char *model_name,
		    const char *gres_text, const char *gres_name,
		    const char *host_default, agora_err_t *err)
{
	int t;
	size_t i, n;

	if (!model_name)
		model_name = "(model)";
	if (!gres_name)
		gres_name = "gres.conf";
	for (t = 0; t < model->n_types; t++) {
		const topo_node_t *nt = &model->types[t];
		const char *spec = nt->nodes[0] ? nt->nodes : host_default;
		char *names;

		if (!spec || !*spec)
			continue;
		names = topo_hostlist_expand(spec, &n);
		if (!names) {
			agora_err_set(err,
				      "%s: node_types[%d].nodes: bad "
				      "hostlist '%s'",
				      model_name, t, spec);
			errno = EINVAL;
			return -1;
		}
		for (i = 0; i < n; i++) {
			const char *h = names + i * TOPO_HOSTNAME_LEN;
			int c = topo_gres_count_gpus(gres_text, gres_name, h,
						     err);

			if (c < 0) {
				free(names);
				return -1;
			}
			if (c != nt->type.n_gpus) {
				agora_err_set(err,
					      "%s: NodeName %s: %d GPUs, "
					      "but %s: node_types[%d] '%s' has "
					      "%d",
					      gres_name, h, c, model_name, t,
					      nt->type.name, nt->type.n_gpus);
				free(names);
				errno = EINVAL;
				return -1;
			}
		}
		free(names);
	}
	return 0;
}

char *topo_topology_conf(const char *nodes, int nodes_per_leaf,
			 const char *leaf_prefix, const char *top_name,
			 agora_err_t *err)
{
	sbuf_t b = { 0 };
	size_t n, i, n_leaves;
	char *names;

	if (!leaf_prefix || !*leaf_prefix)
		leaf_prefix = "leaf";
	if (!top_name || !*top_name)
		top_name = "spine";
	if (!nodes) {
		errno = EINVAL;
		agora_err_set(err, "topology.conf: no nodes given");
		return NULL;
	}
	names = topo_hostlist_expand(nodes, &n);
	if (!names) {
		agora_err_set(err, "topology.conf: bad hostlist '%s'", nodes);
		return NULL;
	}
	if (n == 0) {
		free(names);
		errno = EINVAL;
		agora_err_set(err, "topology.conf: empty node list");
		return NULL;
	}
	if (nodes_per_leaf <= 0 || (size_t) nodes_per_leaf > n)
		nodes_per_leaf = (int) n;
	n_leaves = (n + (size_t) nodes_per_leaf - 1) / (size_t) nodes_per_leaf;
	sb_add(&b,
	       "# topology.conf written by agora-topo: %zu nodes, %d per "
	       "leaf switch, %zu leaves.\n",
	       n, nodes_per_leaf, n_leaves);
	for (i = 0; i < n_leaves; i++) {
		size_t first = i * (size_t) nodes_per_leaf;
		size_t cnt = n - first < (size_t) nodes_per_leaf
				     ? n - first
				     : (size_t) nodes_per_leaf;
		char *hl = topo_hostlist_compress(names, first, cnt);

		if (!hl) {
			b.failed = 1;
			break;
		}
		sb_add(&b, "SwitchName=%s%zu Nodes=%s\n", leaf_prefix, i + 1,
		       hl);
		free(hl);
	}
	if (n_leaves > 1)
		sb_add(&b, "SwitchName=%s Switches=%s[1-%zu]\n", top_name,
		       leaf_prefix, n_leaves);
	free(names);
	return sb_done(&b, err);
}
