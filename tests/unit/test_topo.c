/*
 * Unit tests of the topology core: hwloc XML -> locality model
 * (common/topo/topo_hwloc.c), the model file (topo_model.c), hostlists and the
 * gres.conf / topology.conf writers (topo_hostlist.c, topo_conf.c).
 * Fixtures: the XML files in $AGORA_FIXTURES/topo (tests/fixtures/topo/README.md).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "topo_conf.h"
#include "topo_hostlist.h"
#include "topo_hwloc.h"
#include "topo_model.h"
#include "pol_topo_place.h"

static void fixture_path(char *buf, size_t len, const char *file)
{
	const char *dir = getenv("AGORA_FIXTURES");

	snprintf(buf, len, "%s/topo/%s", dir ? dir : "../fixtures", file);
}

/* derive a fixture; the caller frees */
static topo_node_t *load_fixture(const char *file)
{
	char path[4096];
	agora_err_t err = { { 0 } };
	hwloc_topology_t topo;
	topo_node_t *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	fixture_path(path, sizeof(path), file);
	topo = topo_hwloc_load_xml_file(path, &err);
	if (!topo)
		fail_msg("%s", err.text);
	assert_int_equal(topo_hwloc_derive(topo, file, n, &err), 0);
	hwloc_topology_destroy(topo);
	return n;
}

/* expected level of (i, j) for each fixture shape */
typedef int (*level_rule_f)(int i, int j);

static int rule_nvswitch(int i, int j)
{
	(void) i;
	(void) j;
	return POL_LVL_NVLINK;
}

static int rule_pcie(int i, int j)
{
	if (i == j)
		return POL_LVL_NVLINK;
	if (i / 2 == j / 2)
		return POL_LVL_PCIE;
	return i / 4 == j / 4 ? POL_LVL_SOCKET : POL_LVL_NODE;
}

static int rule_2nvlink(int i, int j)
{
	return i / 4 == j / 4 ? POL_LVL_NVLINK : POL_LVL_NODE;
}

static const struct {
	const char *file;
	int gpus, sockets, cores;
	level_rule_f rule;
	const char *cores0, *cores7;
	int islands;
} fixtures[] = {
	{ "2s-8gpu-nvswitch.xml", 8, 2, 64, rule_nvswitch, "0-31", "32-63", 1 },
	{ "2s-8gpu-pcie.xml", 8, 2, 32, rule_pcie, "0-15", "16-31", 8 },
	{ "2s-8gpu-2nvlink.xml", 8, 2, 40, rule_2nvlink, "0-19", "20-39", 2 },
	{ "2s-cpu.xml", 0, 2, 16, NULL, NULL, NULL, 0 },
};

static void test_topo_fixture_levels_every_gpu_pair(void **state)
{
	size_t f;

	(void) state;
	for (f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		topo_node_t *n = load_fixture(fixtures[f].file);
		int i, j, max_island = -1;

		assert_int_equal(n->type.n_gpus, fixtures[f].gpus);
		assert_int_equal(n->type.n_sockets, fixtures[f].sockets);
		assert_int_equal(n->n_cores, fixtures[f].cores);
		for (i = 0; i < n->type.n_gpus; i++) {
			for (j = 0; j < n->type.n_gpus; j++) {
				if (n->type.level[i][j] !=
				    fixtures[f].rule(i, j))
					fail_msg("%s: level[%d][%d] = %d, "
						 "want %d",
						 fixtures[f].file, i, j,
						 n->type.level[i][j],
						 fixtures[f].rule(i, j));
			}
			assert_int_equal(n->type.gpu_socket[i], i / 4);
			if (n->gpu[i].island > max_island)
				max_island = n->gpu[i].island;
			assert_int_equal(n->type.gpu_island[i],
					 n->gpu[i].island);
			assert_int_equal(n->gpu[i].numa, i / 4);
		}
		assert_int_equal(max_island + 1, fixtures[f].islands);
		if (n->type.n_gpus) {
			assert_string_equal(n->gpu[0].cores,
					    fixtures[f].cores0);
			assert_string_equal(n->gpu[7].cores,
					    fixtures[f].cores7);
			assert_string_equal(n->gpu[0].name, "nvml0");
			assert_string_equal(n->gpu[0].pci_busid,
					    "0000:02:00.0");
		}
		free(n);
	}
}

/*
 * Real machines: hwloc 2.9.0's own test topologies (tests/fixtures/topo/
 * hwloc/README.md).  For each: what the model must derive per GPU, in PCI
 * bus order, and the level of every pair.
 */
typedef struct {
	const char *pci, *name, *cores;
	int socket, numa;
} real_gpu_t;

static const struct {
	const char *file;
	int gpus, sockets, cores;
	real_gpu_t gpu[4];
	int level[4][4];
} real[] = {
	/* IBM POWER8 (drac-12): 4 P100, NVLink pairs 0-1 and 2-3, each pair
	 * also NVLinked to its CPU package (the NVLinkBandwidth matrix holds
	 * the two Packages too) */
	{ "hwloc/power8gpudistances.xml",
	  4,
	  2,
	  8,
	  { { "0002:01:00.0", "nvml0", "0-3", 0, 0 },
	    { "0003:01:00.0", "nvml1", "0-3", 0, 0 },
	    { "000a:01:00.0", "nvml2", "4-7", 1, 1 },
	    { "000b:01:00.0", "nvml3", "4-7", 1, 1 } },
	  { { 0, 0, 3, 3 }, { 0, 0, 3, 3 }, { 3, 3, 0, 0 }, { 3, 3, 0, 0 } } },
	/* mirage004: 3 Tesla M2070, one on socket 0, two on socket 1 under
	 * different root ports; an ATI Rage VGA (1002:515e) is no GPU.
	 * hwloc's tree order is 06, 14, 11: bus order is 06, 11, 14. */
	{ "hwloc/24em64t-2n6c2t-pci.xml",
	  3,
	  2,
	  12,
	  { { "0000:06:00.0", "", "0-5", 0, 0 },
	    { "0000:11:00.0", "", "6-11", 1, 1 },
	    { "0000:14:00.0", "", "6-11", 1, 1 } },
	  { { 0, 3, 3 }, { 3, 0, 2 }, { 3, 2, 0 } } },
	/* conan: 3 Tesla M2075 (the third with CUDA and DRM card0 osdevs)
	 * and, as function 1 of the third, an AMD Radeon carrying an OpenCL
	 * osdev: a GPU too.  The Matrox BMC VGA is not. */
	{ "hwloc/32em64t-2n8c2t-pci-normalio.xml",
	  4,
	  2,
	  16,
	  { { "0000:03:00.0", "", "0-7", 0, 0 },
	    { "0000:83:00.0", "", "8-15", 1, 1 },
	    { "0000:84:00.0", "cuda0", "8-15", 1, 1 },
	    { "0000:84:00.1", "opencl0d1", "8-15", 1, 1 } },
	  { { 0, 3, 3, 3 }, { 3, 0, 2, 2 }, { 3, 2, 0, 1 }, { 3, 2, 1, 0 } } },
};

static void test_topo_real_hwloc_topologies(void **state)
{
	size_t f;

	(void) state;
	for (f = 0; f < sizeof(real) / sizeof(real[0]); f++) {
		topo_node_t *n = load_fixture(real[f].file);
		int i, j;

		if (n->type.n_gpus != real[f].gpus)
			fail_msg("%s: %d GPUs, want %d", real[f].file,
				 n->type.n_gpus, real[f].gpus);
		assert_int_equal(n->type.n_sockets, real[f].sockets);
		assert_int_equal(n->n_cores, real[f].cores);
		for (i = 0; i < real[f].gpus; i++) {
			const real_gpu_t *w = &real[f].gpu[i];

			if (strcmp(n->gpu[i].pci_busid, w->pci))
				fail_msg(
					"%s: GPU %d is %s, want %s (PCI bus order)",
					real[f].file, i, n->gpu[i].pci_busid,
					w->pci);
			assert_string_equal(n->gpu[i].name, w->name);
			assert_string_equal(n->gpu[i].cores, w->cores);
			assert_int_equal(n->gpu[i].socket, w->socket);
			assert_int_equal(n->type.gpu_socket[i], w->socket);
			assert_int_equal(n->gpu[i].numa, w->numa);
			for (j = 0; j < real[f].gpus; j++)
				if (n->type.level[i][j] != real[f].level[i][j])
					fail_msg(
						"%s: level[%d][%d] = %d, want %d",
						real[f].file, i, j,
						n->type.level[i][j],
						real[f].level[i][j]);
		}
		free(n);
	}
}

/*
 * The placer on a real model: POWER8, GPU 0 busy.  A 2-GPU job must take
 * the free NVLink pair 2-3, not 1 and 2 (across sockets); a 1-GPU job
 * must fill the broken pair (GPU 1).
 */
static void test_topo_real_power8_placement(void **state)
{
	topo_node_t *n = load_fixture("hwloc/power8gpudistances.xml");
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 0);
	pol_gpumask_t free_mask = 0xe;
	pol_place_req_t req;
	pol_alloc_t a = { NULL, 0 };
	pol_topo_place_t *p;

	(void) state;
	assert_non_null(c);
	c->types[0] = n->type;
	p = pol_topo_place_create(c, NULL);
	assert_non_null(p);
	memset(&req, 0, sizeof(req));
	req.nodes = 1;
	req.gpus_per_node = 2;
	assert_int_equal(pol_topo_place_req(p, c, &free_mask, &req, &a, NULL),
			 0);
	assert_int_equal(a.n_parts, 1);
	assert_int_equal(a.parts[0].gpus, 0xc);
	assert_int_equal(pol_alloc_level(c, &a), POL_LVL_NVLINK);
	pol_alloc_free(&a);
	req.gpus_per_node = 1;
	assert_int_equal(pol_topo_place_req(p, c, &free_mask, &req, &a, NULL),
			 0);
	assert_int_equal(a.parts[0].gpus, 0x2);
	pol_alloc_free(&a);
	pol_topo_place_destroy(&p);
	pol_cluster_destroy(&c);
	free(n);
}

static void test_topo_nvswitch_and_vga_are_not_gpus(void **state)
{
	/* the NVSwitch fixture has 2 NVSwitch chips (10de, class 0680) and a
	 * BMC VGA with a DRM "card0" osdev: neither is a GPU */
	topo_node_t *n = load_fixture("2s-8gpu-nvswitch.xml");

	(void) state;
	assert_int_equal(n->type.n_gpus, 8);
	free(n);
	n = load_fixture("2s-cpu.xml");
	assert_int_equal(n->type.n_gpus, 0);
	free(n);
}

static void test_topo_islands_override(void **state)
{
	topo_node_t *n = load_fixture("2s-8gpu-pcie.xml");
	agora_err_t err = { { 0 } };
	static const char *const bad[] = { "0-8",  "0-3,3-4", "a",
					   "0-3,", "3-1",     "0+" };
	size_t b;

	(void) state;
	assert_int_equal(topo_node_set_islands(n, "0-3,4-7", &err), 0);
	assert_int_equal(n->type.level[0][3], POL_LVL_NVLINK);
	assert_int_equal(n->type.level[0][4], POL_LVL_NODE);
	assert_int_equal(n->type.level[4][7], POL_LVL_NVLINK);
	assert_int_equal(n->gpu[5].island, 1);
	/* '+' sets and singletons; levels fall back to PCIe / socket */
	assert_int_equal(topo_node_set_islands(n, "0+2,5", &err), 0);
	assert_int_equal(n->type.level[0][2], POL_LVL_NVLINK);
	assert_int_equal(n->type.level[0][1], POL_LVL_PCIE);
	assert_int_equal(n->type.level[1][3], POL_LVL_SOCKET);
	assert_int_equal(n->type.level[4][5], POL_LVL_PCIE);
	for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		topo_node_t before = *n;

		err.text[0] = '\0';
		assert_int_equal(topo_node_set_islands(n, bad[b], &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.text, "islands:"));
		assert_memory_equal(&before, n, sizeof(before));
	}
	free(n);
}

static void test_topo_bad_xml_names_the_file(void **state)
{
	agora_err_t err = { { 0 } };
	static const char junk[] = "<?xml version=\"1.0\"?><topology version=";
	char path[4096];

	(void) state;
	assert_null(topo_hwloc_load_xml_buffer(junk, sizeof(junk) - 1,
					       "junk.xml", &err));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "junk.xml: not a valid hwloc XML"));
	assert_null(topo_hwloc_load_xml_buffer("", 0, "empty.xml", &err));
	assert_non_null(strstr(err.text, "empty.xml"));
	fixture_path(path, sizeof(path), "no-such-file.xml");
	assert_null(topo_hwloc_load_xml_file(path, &err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.text, "no-such-file.xml"));
}

/* cons_tres: sums / ceil(max/4) when max > 4 (gres_select_filter.c) */
static int quantise(int v, int max)
{
	return max > 4 ? v / ((max + 3) / 4) : v;
}

static void test_topo_links_tiers_stay_distinct_after_quantisation(void **s)
{
	size_t f;

	(void) s;
	for (f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		topo_node_t *n = load_fixture(fixtures[f].file);
		int i, j, k, max = 0;

		for (i = 0; i < n->type.n_gpus; i++)
			for (j = 0; j < n->type.n_gpus; j++) {
				int v = topo_link_value(
					(pol_level_t) n->type.level[i][j]);

				assert_true(v > 0 && v <= 1023);
				if (i != j && v > max)
					max = v;
			}
		/* from a single first pick i, a closer GPU must keep a
		 * strictly larger quantised value than a farther one */
		for (i = 0; i < n->type.n_gpus; i++)
			for (j = 0; j < n->type.n_gpus; j++)
				for (k = 0; k < n->type.n_gpus; k++) {
					int lj = n->type.level[i][j];
					int lk = n->type.level[i][k];

					if (i == j || i == k || lj >= lk)
						continue;
					assert_true(
						quantise(topo_link_value(lj),
							 max) >
						quantise(topo_link_value(lk),
							 max));
				}
		free(n);
	}
	/* all four in-node tiers in one node: 16/8/4/2 -> 4/2/1/0 */
	assert_int_equal(quantise(TOPO_LINK_NVLINK, 16), 4);
	assert_int_equal(quantise(TOPO_LINK_PCIE, 16), 2);
	assert_int_equal(quantise(TOPO_LINK_SOCKET, 16), 1);
	assert_int_equal(quantise(TOPO_LINK_NODE, 16), 0);
}

static void test_topo_gres_conf_lines(void **state)
{
	topo_node_t *n = load_fixture("2s-8gpu-pcie.xml");
	agora_err_t err = { { 0 } };
	char *txt;

	(void) state;
	txt = topo_gres_conf(n, "g[1-4]", "/tmp/fake/nvidia", "a100", &err);
	assert_non_null(txt);
	assert_non_null(strstr(txt, "NodeName=g[1-4] Name=gpu Type=a100 "
				    "File=/tmp/fake/nvidia0 Cores=0-15 "
				    "Links=-1,8,4,4,2,2,2,2\n"));
	assert_non_null(strstr(txt, "File=/tmp/fake/nvidia7 Cores=16-31 "
				    "Links=2,2,2,2,4,4,8,-1\n"));
	assert_int_equal(topo_gres_count_gpus(txt, "g.conf", "g3", &err), 8);
	assert_int_equal(topo_gres_count_gpus(txt, "g.conf", "g5", &err), 0);
	free(txt);
	/* default File= prefix and node name */
	txt = topo_gres_conf(n, NULL, NULL, NULL, &err);
	assert_non_null(strstr(txt, "NodeName=2s-8gpu-pcie.xml Name=gpu "
				    "File=/dev/nvidia3 "));
	free(txt);
	assert_null(topo_gres_conf(n, "bad name", NULL, NULL, &err));
	assert_int_equal(errno, EINVAL);
	free(n);
}

static void test_topo_gres_count_forms(void **state)
{
	const char *g = "# comment\n"
			"AutoDetect=nvml\n"
			"NodeName=a[1-2] Name=gpu File=/dev/nvidia[0-3]\n"
			"NodeName=a[1-2] Name=gpu Type=x Count=2\n"
			"NodeName=b1 Name=gpu File=/dev/nvidia0\n"
			"Name=gpu File=/dev/nvidia9 # every node\n"
			"NodeName=a1 Name=mps Count=100\n";
	agora_err_t err = { { 0 } };

	(void) state;
	assert_int_equal(topo_gres_count_gpus(g, "g", "a2", &err), 7);
	assert_int_equal(topo_gres_count_gpus(g, "g", "b1", &err), 2);
	assert_int_equal(topo_gres_count_gpus("NodeName=a[1-] Name=gpu\n",
					      "x.conf", "a1", &err),
			 -1);
	assert_non_null(strstr(err.text, "x.conf:1: NodeName"));
	assert_int_equal(topo_gres_count_gpus("Name=gpu Count=z\n", "y.conf",
					      "a1", &err),
			 -1);
	assert_non_null(strstr(err.text, "y.conf:1: Count"));
	/* an empty Count is not 0 GPUs */
	assert_int_equal(
		topo_gres_count_gpus("Name=gpu Count=\n", "y.conf", "a1", &err),
		-1);
	assert_non_null(strstr(err.text, "y.conf:1: Count"));
	/* lines whose sum passes 2^20 GPUs: refused where it passes (the
	 * int sum used to overflow) */
	assert_int_equal(topo_gres_count_gpus("Name=gpu Count=1048576\n"
					      "Name=gpu Count=1048576\n",
					      "z.conf", "a1", &err),
			 -1);
	assert_non_null(strstr(err.text, "z.conf:2: more than 1048576 GPUs"));
}

static void test_topo_model_json_roundtrip(void **state)
{
	topo_node_t *n = load_fixture("2s-8gpu-2nvlink.xml");
	topo_model_t m = { 0 }, back = { 0 };
	agora_err_t err = { { 0 } };
	char *js;

	(void) state;
	snprintf(n->nodes, sizeof(n->nodes), "c1n[1-32]");
	assert_int_equal(topo_model_add(&m, n), 0);
	js = topo_model_to_json(&m);
	assert_non_null(js);
	if (topo_model_parse_string(js, "m.json", &back, &err) < 0)
		fail_msg("%s", err.text);
	assert_int_equal(back.n_types, 1);
	assert_memory_equal(&back.types[0].type, &n->type, sizeof(n->type));
	assert_string_equal(back.types[0].nodes, "c1n[1-32]");
	assert_string_equal(back.types[0].gpu[6].cores, "20-39");
	assert_int_equal(back.types[0].gpu[6].pcie_switch, 3);
	assert_int_equal(topo_model_find(&back, "c1n7"), 0);
	assert_int_equal(topo_model_find(&back, "c2n7"), -1);
	free(js);
	topo_model_free(&back);
	topo_model_free(&m);
	free(n);
}

/* One node-type rule for the auction and the select wrapper: the model's
 * type when the GPU count agrees, else the uniform type of the count. */
static void test_topo_model_node_type_rule(void **state)
{
	topo_node_t *n = load_fixture("2s-8gpu-2nvlink.xml");
	topo_model_t m = { 0 };
	pol_node_type_t *types = NULL;
	int n_types, i;
	size_t cap = 0;
	bool mismatch = true;

	(void) state;
	snprintf(n->nodes, sizeof(n->nodes), "a[1-2]");
	assert_int_equal(topo_model_add(&m, n), 0);
	assert_int_equal(m.types[0].type.n_gpus, 8);
	types = calloc(1, sizeof(*types));
	cap = 1;
	types[0] = m.types[0].type;
	n_types = 1;
	/* in the model, right count: the model's type */
	assert_int_equal(topo_model_node_type(&m, &types, &n_types, &cap, "a1",
					      8, &mismatch),
			 0);
	assert_false(mismatch);
	/* in the model, other count: uniform-4, flagged */
	assert_int_equal(topo_model_node_type(&m, &types, &n_types, &cap, "a2",
					      4, &mismatch),
			 1);
	assert_true(mismatch);
	assert_string_equal(types[1].name, "uniform-4");
	assert_int_equal(types[1].n_gpus, 4);
	assert_int_equal(types[1].n_sockets, 1);
	/* not in the model: the same uniform type is reused */
	assert_int_equal(topo_model_node_type(&m, &types, &n_types, &cap, "b1",
					      4, &mismatch),
			 1);
	assert_false(mismatch);
	assert_int_equal(
		topo_model_node_type(&m, &types, &n_types, &cap, "b2", 8, NULL),
		2);
	/* without a model every node is uniform; counts are clamped */
	assert_int_equal(topo_model_node_type(NULL, &types, &n_types, &cap,
					      "c1", 999, NULL),
			 3);
	assert_int_equal(types[3].n_gpus, POL_MAX_GPUS_PER_NODE);
	assert_int_equal(n_types, 4);
	for (i = 0; i < n_types; i++)
		assert_true(types[i].n_gpus >= 0);
	free(types);
	topo_model_free(&m);
	free(n);
}

static void test_topo_model_bad_json_names_file_and_field(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "{ nope", "m.json: not valid JSON" },
		{ "[1]", "m.json: top level: not a JSON object" },
		{ "{\"version\":1,\"node_types\":[]}",
		  "m.json: format: missing" },
		{ "{\"format\":\"agora-topo-model\",\"version\":2,"
		  "\"node_types\":[]}",
		  "m.json: version: 2 out of range" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"gpus\":\"8\"}]}",
		  "m.json: node_types[0].gpus: not an integer" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"gpus\":2,\"gpu\":[{}]}]}",
		  "m.json: node_types[0].gpu: 1 entries but gpus is 2" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"gpus\":2,\"gpu\":[{},"
		  "{\"cores\":\"1-x\"}]}]}",
		  "m.json: node_types[0].gpu[1].cores: bad core list" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"gpus\":2,\"gpu\":[{},{}],"
		  "\"level\":[[0,0],[0,0]]}]}",
		  "m.json: node_types[0].level[0][1]: 0 contradicts" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"gpus\":65}]}",
		  "m.json: node_types[0].gpus: 65 out of range" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"gpus\":0},"
		  "{\"name\":\"a\",\"gpus\":0}]}",
		  "m.json: node_types[1].name: 'a' already used" },
		{ "{\"format\":\"agora-topo-model\",\"version\":1,"
		  "\"node_types\":[{\"name\":\"a\",\"nodes\":\"x[1-\","
		  "\"gpus\":0}]}",
		  "m.json: node_types[0].nodes: bad hostlist" },
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		topo_model_t m = { 0 };
		agora_err_t err = { { 0 } };

		assert_int_equal(topo_model_parse_string(cases[i].text,
							 "m.json", &m, &err),
				 -1);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err.text, cases[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i, err.text,
				 cases[i].want);
		assert_int_equal(m.n_types, 0);
	}
	{
		topo_model_t m = { 0 };
		agora_err_t err = { { 0 } };

		assert_int_equal(
			topo_model_load("/nonexistent/m.json", &m, &err), -1);
		assert_int_equal(errno, ENOENT);
		assert_non_null(strstr(err.text, "/nonexistent/m.json"));
	}
}

static void test_topo_model_contradicting_gres_conf(void **state)
{
	topo_node_t *n = load_fixture("2s-8gpu-nvswitch.xml");
	topo_model_t m = { 0 };
	agora_err_t err = { { 0 } };
	char *g8, *g4;

	(void) state;
	snprintf(n->nodes, sizeof(n->nodes), "d[1-2]");
	assert_int_equal(topo_model_add(&m, n), 0);
	g8 = topo_gres_conf(n, NULL, NULL, NULL, &err);
	assert_int_equal(
		topo_gres_check(&m, "m.json", g8, "gres.conf", NULL, &err), 0);
	g4 = strdup("NodeName=d[1-2] Name=gpu File=/dev/nvidia[0-3]\n");
	assert_int_equal(
		topo_gres_check(&m, "m.json", g4, "gres.conf", NULL, &err), -1);
	assert_string_equal(err.text, "gres.conf: NodeName d1: 4 GPUs, but "
				      "m.json: node_types[0] "
				      "'2s-8gpu-nvswitch.xml' has 8");
	free(g8);
	free(g4);
	topo_model_free(&m);
	free(n);
}

static void test_topo_hostlist(void **state)
{
	static const struct {
		const char *spec;
		long n;
		const char *compressed;
	} cases[] = {
		{ "c1n[1-32]", 32, "c1n[1-32]" },
		{ "a[01-03,07],b", 5, "a[01-03],a07,b" },
		{ "x9,x10,x11", 3, "x[9-11]" },
		{ "n[098-101]", 4, "n[098-101]" },
		{ "", 0, "" },
		{ "a[1-", -1, NULL },
		{ "a[]", -1, NULL },
		{ "a[2-1]", -1, NULL },
		{ "a,,b", -1, NULL },
		{ "a[1,]", -1, NULL },
		{ "a b", -1, NULL },
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n;
		char *v = topo_hostlist_expand(cases[i].spec, &n);

		if (cases[i].n < 0) {
			assert_null(v);
			assert_int_equal(errno, EINVAL);
			continue;
		}
		assert_non_null(v);
		assert_int_equal((long) n, cases[i].n);
		{
			char *c = topo_hostlist_compress(v, 0, n);

			assert_string_equal(c, cases[i].compressed);
			free(c);
		}
		free(v);
	}
	assert_int_equal(topo_hostlist_contains("c1n[1-32]", "c1n17"), 1);
	assert_int_equal(topo_hostlist_contains("c1n[1-32]", "c1n017"), 0);
	assert_int_equal(topo_hostlist_contains("c1n[1-", "c1n1"), -1);
	/* a bad item after the host's is still an error */
	assert_int_equal(topo_hostlist_contains("c1n[1-32],x[", "c1n1"), -1);
	/* counted and matched without expanding: a million names */
	assert_int_equal(topo_hostlist_count("n[0-999999]"), 1000000);
	assert_int_equal(topo_hostlist_contains("n[0-999999]", "n999999"), 1);
	assert_int_equal(topo_hostlist_contains("n[0-999999]", "n1000000"), 0);
	assert_int_equal(topo_hostlist_count("n[0-999999],m"), -1);
	assert_int_equal(topo_hostlist_contains("n[0-999999],m", "m"), -1);
	/* a name of 64 characters is too long, as in the expansion */
	assert_int_equal(
		topo_hostlist_count("a[1-9]"
				    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
				    "cccccccccccccccccccccccccccccccc"),
		-1);
}

/* contains() by arithmetic agrees with membership in the expansion, for
 * every name of the expansion and names next to them */
static void test_topo_hostlist_contains_matches_expand(void **state)
{
	static const char *const specs[] = {
		"c1n[1-32]",       "a[01-03,07],b", "x9,x10,x11",
		"n[098-101]",      "g[8-12]x",      "p[0-0]",
		"q[007-1000]s,q5", "r[1-3],r[2-4]",
	};
	static const char *const extra[] = {
		"c1n0",  "c1n33",  "c1n017", "a00",  "a04", "a7",    "b1",
		"x8",    "x010",   "n97",    "n098", "n98", "n102",  "g12",
		"g9x",   "g09x",   "g13x",   "p0",   "p00", "q006s", "q0007s",
		"q999s", "q1000s", "q1001s", "q5",   "q05", "r0",    "r4",
		"",      "c1n",    "c1n1x",  "1",    "gx",
	};

	(void) state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		size_t n;
		char *v = topo_hostlist_expand(specs[i], &n);

		assert_non_null(v);
		assert_int_equal(topo_hostlist_count(specs[i]), (long) n);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(
				topo_hostlist_contains(
					specs[i], v + k * TOPO_HOSTNAME_LEN),
				1);
		for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++) {
			int in = 0;

			for (size_t k = 0; k < n && !in; k++)
				in = !strcmp(v + k * TOPO_HOSTNAME_LEN,
					     extra[e]);
			if (topo_hostlist_contains(specs[i], extra[e]) != in)
				fail_msg(
					"%s in %s: contains says %d, the expansion %d",
					extra[e], specs[i], !in, in);
		}
		free(v);
	}
}

static void test_topo_topology_conf_leaves(void **state)
{
	agora_err_t err = { { 0 } };
	char *t = topo_topology_conf("c1n[1-32]", 16, NULL, NULL, &err);

	(void) state;
	assert_non_null(t);
	assert_non_null(strstr(t, "\nSwitchName=leaf1 Nodes=c1n[1-16]\n"
				  "SwitchName=leaf2 Nodes=c1n[17-32]\n"
				  "SwitchName=spine Switches=leaf[1-2]\n"));
	free(t);
	t = topo_topology_conf("a[1-3]", 0, "sw", "top", &err);
	assert_non_null(strstr(t, "SwitchName=sw1 Nodes=a[1-3]\n"));
	assert_null(strstr(t, "Switches="));
	free(t);
	assert_null(topo_topology_conf("a[1-", 4, NULL, NULL, &err));
	assert_non_null(strstr(err.text, "bad hostlist"));
}

static void test_topo_ranges(void **state)
{
	int v[16], n;
	char buf[64];
	static const int in[] = { 0, 1, 2, 3, 8, 10, 11 };

	(void) state;
	assert_int_equal(topo_format_ranges(in, 7, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0-3,8,10-11");
	n = topo_parse_ranges(buf, v, 16, 64);
	assert_int_equal(n, 7);
	assert_memory_equal(v, in, sizeof(in));
	assert_int_equal(topo_format_ranges(in, 7, buf, 5), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(topo_parse_ranges("3-1", v, 16, 64), -1);
	assert_int_equal(topo_parse_ranges("70", v, 16, 64), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topo_fixture_levels_every_gpu_pair),
		cmocka_unit_test(test_topo_real_hwloc_topologies),
		cmocka_unit_test(test_topo_real_power8_placement),
		cmocka_unit_test(test_topo_nvswitch_and_vga_are_not_gpus),
		cmocka_unit_test(test_topo_islands_override),
		cmocka_unit_test(test_topo_bad_xml_names_the_file),
		cmocka_unit_test(
			test_topo_links_tiers_stay_distinct_after_quantisation),
		cmocka_unit_test(test_topo_gres_conf_lines),
		cmocka_unit_test(test_topo_gres_count_forms),
		cmocka_unit_test(test_topo_model_json_roundtrip),
		cmocka_unit_test(test_topo_model_node_type_rule),
		cmocka_unit_test(test_topo_model_bad_json_names_file_and_field),
		cmocka_unit_test(test_topo_model_contradicting_gres_conf),
		cmocka_unit_test(test_topo_hostlist),
		cmocka_unit_test(test_topo_hostlist_contains_matches_expand),
		cmocka_unit_test(test_topo_topology_conf_leaves),
		cmocka_unit_test(test_topo_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
