/*
 * agora-topo - derive Agora's GPU locality model from hwloc and write the
 * Slurm configuration that follows from it (doc/topology.md):
 *
 *   agora-topo model    (-i XML | --local) [--name N] [--nodes HL]
 *                       [--islands SPEC] [-o FILE]
 *   agora-topo gres     (-i XML | --local | -m MODEL [--type-name N])
 *                       [--nodes HL] [--islands SPEC] [--file-prefix P]
 *                       [--type T] [-o FILE]
 *   agora-topo topology --nodes HL [--nodes HL ...] [--nodes-per-leaf N]
 *                       [--leaf-prefix P] [--top NAME] [-o FILE]
 *   agora-topo check    -m MODEL -g GRES_CONF [--node HOST]
 *   agora-topo merge    MODEL... [-o FILE]
 *   agora-topo show     (-i XML | --local | -m MODEL)
 *
 * All derivation lives in common/ (topo_hwloc, topo_model, topo_conf);
 * this file only parses options, loads the local topology when asked
 * (the core never does) and writes files.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "agora_config.h"
#include "agora_file.h"
#include "topo_conf.h"
#include "topo_hostlist.h"
#include "topo_hwloc.h"
#include "topo_model.h"

static const char *prog = "agora-topo";

/* gres.conf is a configuration file: the same cap as agora.conf */
#define GRES_CONF_MAX_BYTES ((size_t) 16 << 20)

typedef struct opts {
	const char *xml, *model, *gres, *name, *islands, *file_prefix;
	const char *type, *type_name, *out, *leaf_prefix, *top, *node;
	char *nodes; /* joined --nodes values */
	int local, per_leaf;
} opts_t;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [options]\n"
		"  model    (-i XML | --local) [--name N] [--nodes HOSTLIST]\n"
		"           [--islands SPEC] [-o FILE]     write the model JSON\n"
		"  gres     (-i XML | --local | -m MODEL [--type-name N])\n"
		"           [--nodes HOSTLIST] [--islands SPEC]\n"
		"           [--file-prefix /dev/nvidia] [--type T] [-o FILE]\n"
		"                                          write gres.conf lines\n"
		"  topology --nodes HOSTLIST [--nodes ...] [--nodes-per-leaf N]\n"
		"           [--leaf-prefix leaf] [--top spine] [-o FILE]\n"
		"                                          write topology.conf\n"
		"  check    -m MODEL -g GRES_CONF [--node HOST]\n"
		"                                          model vs gres.conf\n"
		"  merge    MODEL... [-o FILE]             one model, many types\n"
		"  show     (-i XML | --local | -m MODEL)  print the levels\n"
		"Islands SPEC: \"0-3,4-7\" (two islands) or \"0+2,1+3\".\n",
		prog);
}

static int die(const char *msg)
{
	fprintf(stderr, "%s: %s\n", prog, msg);
	return 1;
}

static int write_out(const char *path, const char *text, int nl)
{
	FILE *f = stdout;

	if (path && strcmp(path, "-")) {
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", prog, path,
				strerror(errno));
			return 1;
		}
	}
	if (fputs(text, f) == EOF || (nl && fputc('\n', f) == EOF) ||
	    (f != stdout && fclose(f) != 0)) {
		fprintf(stderr, "%s: %s: write error\n", prog,
			path ? path : "stdout");
		return 1;
	}
	return 0;
}

static char *read_file(const char *path, agora_err_t *err)
{
	char *buf = NULL;
	size_t len;

	if (agora_file_read_ex(path, GRES_CONF_MAX_BYTES, AGORA_FILE_FOLLOW,
			       &buf, &len, NULL, err) < 0)
		return NULL;
	return buf;
}

/* derive a node type from -i XML or --local */
static int load_node(const opts_t *o, topo_node_t *n, agora_err_t *err)
{
	hwloc_topology_t topo = NULL;
	const char *name = o->name;
	int rc;

	if (o->xml) {
		topo = topo_hwloc_load_xml_file(o->xml, err);
		if (!topo)
			return -1;
	} else if (o->local) {
		if (hwloc_topology_init(&topo) < 0 ||
		    topo_hwloc_set_filters(topo) < 0 ||
		    hwloc_topology_load(topo) < 0) {
			agora_err_set(err, "local: cannot load the hwloc "
					   "topology of this machine");
			if (topo)
				hwloc_topology_destroy(topo);
			return -1;
		}
	} else {
		agora_err_set(err, "give -i XML or --local");
		return -1;
	}
	if (!name) {
		const char *hn = hwloc_obj_get_info_by_name(
			hwloc_get_root_obj(topo), "HostName");

		name = hn ? hn : "node";
	}
	rc = topo_hwloc_derive(topo, name, n, err);
	hwloc_topology_destroy(topo);
	if (rc < 0)
		return -1;
	if (o->nodes) {
		/* checked here: a list cut short or one the model's
		 * loader refuses would be written without a word */
		if (strlen(o->nodes) >= sizeof(n->nodes)) {
			agora_err_set(
				err,
				"--nodes: '%.40s...' is %zu characters, at most %zu",
				o->nodes, strlen(o->nodes),
				sizeof(n->nodes) - 1);
			return -1;
		}
		if (topo_hostlist_count(o->nodes) < 1) {
			agora_err_set(err, "--nodes: '%s': bad hostlist",
				      o->nodes);
			return -1;
		}
		snprintf(n->nodes, sizeof(n->nodes), "%s", o->nodes);
	}
	if (o->islands && topo_node_set_islands(n, o->islands, err) < 0)
		return -1;
	return 0;
}

static int cmd_model(const opts_t *o)
{
	topo_node_t *n = calloc(1, sizeof(*n));
	topo_model_t m = { 0 };
	agora_err_t err = { { 0 } };
	char *js = NULL;
	int rc = 1;

	if (!n)
		return die("out of memory");
	if (load_node(o, n, &err) < 0 || topo_model_add(&m, n) < 0) {
		rc = die(err.text[0] ? err.text : "out of memory");
		goto out;
	}
	js = topo_model_to_json(&m);
	if (!js) {
		rc = die("out of memory");
		goto out;
	}
	rc = write_out(o->out, js, 1);
out:
	free(js);
	free(n);
	topo_model_free(&m);
	return rc;
}

static int cmd_gres(const opts_t *o)
{
	topo_node_t *n = calloc(1, sizeof(*n));
	topo_model_t m = { 0 };
	agora_err_t err = { { 0 } };
	char *txt = NULL;
	int rc = 1;

	if (!n)
		return die("out of memory");
	if (o->model) {
		int t = 0;

		if (topo_model_load(o->model, &m, &err) < 0) {
			rc = die(err.text);
			goto out;
		}
		if (o->type_name) {
			for (t = 0; t < m.n_types; t++)
				if (!strcmp(m.types[t].type.name, o->type_name))
					break;
		} else if (m.n_types != 1) {
			fprintf(stderr,
				"%s: %s: %d node types: pick one with "
				"--type-name\n",
				prog, o->model, m.n_types);
			goto out;
		}
		if (t >= m.n_types) {
			fprintf(stderr, "%s: %s: no node type '%s'\n", prog,
				o->model, o->type_name);
			goto out;
		}
		*n = m.types[t];
		if (o->islands &&
		    topo_node_set_islands(n, o->islands, &err) < 0) {
			rc = die(err.text);
			goto out;
		}
	} else if (load_node(o, n, &err) < 0) {
		rc = die(err.text);
		goto out;
	}
	txt = topo_gres_conf(n, o->nodes, o->file_prefix, o->type, &err);
	if (!txt) {
		rc = die(err.text);
		goto out;
	}
	rc = write_out(o->out, txt, 0);
out:
	free(txt);
	free(n);
	topo_model_free(&m);
	return rc;
}

static int cmd_topology(const opts_t *o)
{
	agora_err_t err = { { 0 } };
	char *txt;
	int rc;

	if (!o->nodes) {
		usage(stderr);
		return 2;
	}
	txt = topo_topology_conf(o->nodes, o->per_leaf, o->leaf_prefix, o->top,
				 &err);
	if (!txt)
		return die(err.text);
	rc = write_out(o->out, txt, 0);
	free(txt);
	return rc;
}

static int cmd_check(const opts_t *o)
{
	topo_model_t m = { 0 };
	agora_err_t err = { { 0 } };
	char *gres;
	int rc = 0;

	if (!o->model || !o->gres) {
		usage(stderr);
		return 2;
	}
	if (topo_model_load(o->model, &m, &err) < 0)
		return die(err.text);
	gres = read_file(o->gres, &err);
	if (!gres) {
		topo_model_free(&m);
		return die(err.text);
	}
	if (topo_gres_check(&m, o->model, gres, o->gres, o->node, &err) < 0)
		rc = die(err.text);
	else
		printf("%s: %s agrees with %s\n", prog, o->gres, o->model);
	free(gres);
	topo_model_free(&m);
	return rc;
}

static int cmd_merge(const opts_t *o, int argc, char **argv)
{
	topo_model_t all = { 0 };
	agora_err_t err = { { 0 } };
	char *js;
	int i, t, k, rc;

	if (argc < 1) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < argc; i++) {
		topo_model_t m = { 0 };

		if (topo_model_load(argv[i], &m, &err) < 0) {
			topo_model_free(&all);
			return die(err.text);
		}
		for (t = 0; t < m.n_types; t++) {
			for (k = 0; k < all.n_types; k++)
				if (!strcmp(all.types[k].type.name,
					    m.types[t].type.name)) {
					fprintf(stderr,
						"%s: %s: node type "
						"'%s' defined twice\n",
						prog, argv[i],
						m.types[t].type.name);
					topo_model_free(&m);
					topo_model_free(&all);
					return 1;
				}
			if (topo_model_add(&all, &m.types[t]) < 0) {
				topo_model_free(&m);
				topo_model_free(&all);
				return die("out of memory");
			}
		}
		topo_model_free(&m);
	}
	js = topo_model_to_json(&all);
	topo_model_free(&all);
	if (!js)
		return die("out of memory");
	rc = write_out(o->out, js, 1);
	free(js);
	return rc;
}

static const char *const lvl_name[] = { "NV", "PCIe", "SOCK", "NODE" };

static void show_node(const topo_node_t *n)
{
	int i, j;

	printf("node type %s: %d GPUs, %d sockets, %d cores, %d CPUs, "
	       "%lld MiB%s%s\n",
	       n->type.name, n->type.n_gpus, n->type.n_sockets, n->n_cores,
	       n->type.cpus, (long long) n->type.mem_mb,
	       n->nodes[0] ? ", nodes " : "", n->nodes);
	for (i = 0; i < n->type.n_gpus; i++)
		printf("  GPU%-2d %-8s pci %-12s socket %d numa %d switch %d "
		       "island %d cores %s\n",
		       i, n->gpu[i].name, n->gpu[i].pci_busid, n->gpu[i].socket,
		       n->gpu[i].numa, n->gpu[i].pcie_switch, n->gpu[i].island,
		       n->gpu[i].cores);
	if (!n->type.n_gpus)
		return;
	printf("  %6s", "");
	for (j = 0; j < n->type.n_gpus; j++)
		printf(" GPU%-2d", j);
	printf("\n");
	for (i = 0; i < n->type.n_gpus; i++) {
		printf("  GPU%-2d ", i);
		for (j = 0; j < n->type.n_gpus; j++)
			printf(" %-5s",
			       i == j ? "X"
				      : lvl_name[n->type.level[i][j] & 3]);
		printf("\n");
	}
}

static int cmd_show(const opts_t *o)
{
	agora_err_t err = { { 0 } };
	int t;

	if (o->model) {
		topo_model_t m = { 0 };

		if (topo_model_load(o->model, &m, &err) < 0)
			return die(err.text);
		for (t = 0; t < m.n_types; t++)
			show_node(&m.types[t]);
		topo_model_free(&m);
	} else {
		topo_node_t *n = calloc(1, sizeof(*n));

		if (!n)
			return die("out of memory");
		if (load_node(o, n, &err) < 0) {
			free(n);
			return die(err.text);
		}
		show_node(n);
		free(n);
	}
	return 0;
}

static int add_nodes(opts_t *o, const char *v)
{
	size_t len = (o->nodes ? strlen(o->nodes) + 1 : 0) + strlen(v) + 1;
	char *nn = malloc(len);

	if (!nn)
		return -1;
	snprintf(nn, len, "%s%s%s", o->nodes ? o->nodes : "",
		 o->nodes ? "," : "", v);
	free(o->nodes);
	o->nodes = nn;
	return 0;
}

static void print_version(void)
{
	printf("%s %s (hwloc runtime %u.%u.%u, built with %u.%u.%u)\n", prog,
	       PACKAGE_VERSION, hwloc_get_api_version() >> 16,
	       (hwloc_get_api_version() >> 8) & 0xff,
	       hwloc_get_api_version() & 0xff, HWLOC_API_VERSION >> 16,
	       (HWLOC_API_VERSION >> 8) & 0xff, HWLOC_API_VERSION & 0xff);
}

/* The options after the command; 0 to run it, 1 to exit with *rc. */
static int parse_opts(int argc, char **argv, opts_t *o, int *rc)
{
	static const struct option lopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "local", no_argument, NULL, 'L' },
		{ "model", required_argument, NULL, 'm' },
		{ "gres", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'n' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "islands", required_argument, NULL, 'I' },
		{ "file-prefix", required_argument, NULL, 'F' },
		{ "type", required_argument, NULL, 'T' },
		{ "type-name", required_argument, NULL, 't' },
		{ "nodes-per-leaf", required_argument, NULL, 'l' },
		{ "leaf-prefix", required_argument, NULL, 'P' },
		{ "top", required_argument, NULL, 'S' },
		{ "node", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 2;
	while ((c = getopt_long(argc, argv, "i:m:g:o:n:h", lopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'i':
			o->xml = optarg;
			break;
		case 'L':
			o->local = 1;
			break;
		case 'm':
			o->model = optarg;
			break;
		case 'g':
			o->gres = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'n':
			o->name = optarg;
			break;
		case 'N':
			if (add_nodes(o, optarg) < 0) {
				*rc = die("out of memory");
				return 1;
			}
			break;
		case 'I':
			o->islands = optarg;
			break;
		case 'F':
			o->file_prefix = optarg;
			break;
		case 'T':
			o->type = optarg;
			break;
		case 't':
			o->type_name = optarg;
			break;
		case 'l': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 0 || v > 1000000) {
				fprintf(stderr,
					"%s: --nodes-per-leaf: bad "
					"value '%s'\n",
					prog, optarg);
				*rc = 2;
				return 1;
			}
			o->per_leaf = (int) v;
			break;
		}
		case 'P':
			o->leaf_prefix = optarg;
			break;
		case 'S':
			o->top = optarg;
			break;
		case 'H':
			o->node = optarg;
			break;
		case 'h':
			usage(stdout);
			*rc = 0;
			return 1;
		default:
			usage(stderr);
			*rc = 2;
			return 1;
		}
	}
	return 0;
}

/* Run command cmd; its exit code. */
static int run_cmd(const char *cmd, const opts_t *o, int argc, char **argv)
{
	int rc;

	if (!strcmp(cmd, "model"))
		rc = cmd_model(o);
	else if (!strcmp(cmd, "gres"))
		rc = cmd_gres(o);
	else if (!strcmp(cmd, "topology"))
		rc = cmd_topology(o);
	else if (!strcmp(cmd, "check"))
		rc = cmd_check(o);
	else if (!strcmp(cmd, "merge"))
		rc = cmd_merge(o, argc - optind, argv + optind);
	else if (!strcmp(cmd, "show"))
		rc = cmd_show(o);
	else {
		fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
		usage(stderr);
		rc = 2;
	}
	return rc;
}

int main(int argc, char **argv)
{
	opts_t o;
	const char *cmd;
	int rc;

	memset(&o, 0, sizeof(o));
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		print_version();
		return 0;
	}
	if (parse_opts(argc, argv, &o, &rc) == 0)
		rc = run_cmd(cmd, &o, argc, argv);
	free(o.nodes);
	return rc;
}
