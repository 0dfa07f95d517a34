/*
 * agoractl - Agora's command line: what Agora decided, per account.
 *
 *   agoractl credits   accounts: credit, quota, decayed usage (GPU-hours)
 *                      and finish-time fairness rho, worst credit first
 *   agoractl leases    running jobs' GPU leases (end, active or grace)
 *   agoractl show      everything slurmctld/agora publishes, raw
 *
 * It asks slurmctld through the public API (slurm_load_ctl_conf(), the RPC
 * behind "scontrol show config") for the key/value pairs that the
 * slurmctld/agora plugin publishes, so it works from any host with the
 * cluster's slurm.conf (SLURM_CONF), as scontrol does.  Needs
 * SlurmctldPlugstack=slurmctld/agora on the controller.
 *
 * PrivateData: slurmctld does not tell the plugin who asks, so with
 * PrivateData containing usage, accounts, users or jobs the RPC carries no
 * per-account rows for anyone, and with jobs no lease job ids (see
 * plugins/slurmctld/agora).  Run as root or SlurmUser, agoractl then reads
 * StateSaveLocation/agora_view.json itself when it can (on the controller)
 * and shows everything; elsewhere it prints what is hidden and why.
 *
 * Whatever it prints passes through the name sanitiser again (control
 * characters as \xHH), so a plugin of another version cannot make it
 * print raw control characters or extra lines.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agora_config.h"

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "ac_out.h"
#include "agora_prom.h"
#include "agora_view.h"
#include "metrics_cmds.h"
#include "est_cmds.h"
#include "fed_cmds.h"
#include "loan_cmds.h"

/*
 * Layout of the list items slurmctld returns in slurmctld_plugstack_conf
 * (src/common/read_config.h of Slurm 22.05: config_plugin_params_t and
 * config_key_pair_t); not in the public headers.
 */
typedef struct {
	char *name;
	char *value;
} agoractl_pair_t;

typedef struct {
	char *name;
	List key_pairs;
} agoractl_plugin_params_t;

typedef struct {
	char account[AGORA_NAME_SIZE];
	double credit, quota, usage, rho;
	int has_rho;
} credit_row_t;

/* The pairs shown: from the RPC or from the view file. */
typedef struct {
	char **names, **values;
	size_t n, size;
} pairs_t;

static int usage(FILE *f)
{
	fprintf(f,
		"usage: agoractl COMMAND [ARGS] [--json] | --help | --version\n"
		"  --json   one JSON document (meta, errors, warnings, data) in\n"
		"           the shape of squeue --json, instead of the text\n"
		"  credits  accounts: credit, quota, usage (GPU-h), rho\n"
		"  leases   running jobs' GPU leases\n"
		"  show     all key=value pairs slurmctld/agora publishes\n"
		"  fed | explain JOBID | datasets | place [--apply]: the federation\n"
		"  loans    inference nodes on loan, borrowers, reclaim history\n"
		"  loan-curve  the diurnal demand model, compressed (loan_cmds.c)\n"
		"  metrics [--out FILE] [--state FILE]: Prometheus text format\n"
		"           (FILE written atomically, for node_exporter's textfile\n"
		"           collector)\n"
		"  estimates seed [--days N]: seed the auction's run-time history\n"
		"           from slurmdbd (merged at the next reconfigure)\n"
		"The cluster is the one of SLURM_CONF (as for scontrol).\n"
		"\n"
		"PrivateData (slurm.conf) applies to every caller, since slurmctld\n"
		"does not tell the plugin who asks:\n"
		"  usage, accounts, users or jobs: no per-account rows (credit,\n"
		"    quota, usage, rho), only the number of apps and a notice;\n"
		"  jobs: leases without job ids (numbered #1, #2, ...).\n"
		"root and SlurmUser see everything when they run agoractl where\n"
		"StateSaveLocation/agora_view.json is readable (the controller).\n"
		"Names are printed sanitised: bytes other than [A-Za-z0-9._+@:/-]\n"
		"as \\xHH, at most 64 bytes (longer ones end in ~<hash>).\n");
	return f == stderr ? 2 : 0;
}

static void pairs_add(void *arg, const char *name, const char *value)
{
	pairs_t *p = arg;

	if (p->n == p->size) {
		p->size = p->size ? 2 * p->size : 32;
		p->names = realloc(p->names, p->size * sizeof(char *));
		p->values = realloc(p->values, p->size * sizeof(char *));
		if (!p->names || !p->values) {
			perror("agoractl");
			exit(1);
		}
	}
	p->names[p->n] = strdup(name ? name : "");
	p->values[p->n] = strdup(value ? value : "");
	if (!p->names[p->n] || !p->values[p->n]) {
		perror("agoractl");
		exit(1);
	}
	p->n++;
}

static void pairs_free(pairs_t *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->names[i]);
		free(p->values[i]);
	}
	free(p->names);
	free(p->values);
	memset(p, 0, sizeof(*p));
}

static const char *pairs_get(const pairs_t *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->names[i], name))
			return p->values[i];
	return NULL;
}

/* Print s with control characters (and DEL) as \xHH: one line at most. */
static void put_safe(const char *s, int width)
{
	int n = 0;

	for (; *s; s++, n++) {
		unsigned char c = (unsigned char) *s;

		if (c < 0x20 || c == 0x7f) {
			printf("\\x%02x", c);
			n += 3;
		} else {
			putchar(c);
		}
	}
	for (; n < width; n++)
		putchar(' ');
}

static int cmp_credit(const void *a, const void *b)
{
	const credit_row_t *x = a, *y = b;

	if (x->credit != y->credit)
		return x->credit < y->credit ? -1 : 1;
	return strcmp(x->account, y->account);
}

/* Parse "Credit[acct]" = "credit=C quota=Q usage=U GPU-h rho=R". */
static int parse_credit(const char *name, const char *value, credit_row_t *r)
{
	const char *lb = strchr(name, '['), *rb = strrchr(name, ']');
	const char *rho;
	size_t n;

	if (!lb || !rb || rb <= lb + 1)
		return -1;
	n = (size_t) (rb - lb - 1);
	if (n >= sizeof(r->account))
		n = sizeof(r->account) - 1;
	memcpy(r->account, lb + 1, n);
	r->account[n] = '\0';
	if (sscanf(value, "credit=%lf quota=%lf usage=%lf", &r->credit,
		   &r->quota, &r->usage) != 3)
		return -1;
	rho = strstr(value, "rho=");
	r->has_rho = rho && sscanf(rho, "rho=%lf", &r->rho) == 1;
	return 0;
}

/* Parse a "Lease[job]" value: "gpus=N until=T state=active|grace". */
static int parse_lease(const char *value, agora_view_lease_t *l)
{
	long long g;
	const char *st = strstr(value, "state=");

	memset(l, 0, sizeof(*l));
	if (sscanf(value, "gpus=%lld", &g) != 1 || !st)
		return -1;
	l->gpus = g;
	l->grace = !strncmp(st + 6, "grace", 5);
	return 0;
}

static void fmt_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t) t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, size, "%FT%T", &tm))
		snprintf(buf, size, "%lld", (long long) t);
}

/*
 * The caller may read the whole view (root or SlurmUser) and the RPC hid
 * some of it: read the file where slurmctld keeps it.  Returns 1 if *full
 * holds the full view, 0 if not (why: a notice printed).
 */
/*
 * Slurm 23.02 and later (no SlurmctldPlugstack): the view file itself,
 * readable where StateSaveLocation is (the controller's host, as root or
 * SlurmUser); 1 if it was read, else 0 after one message.
 */
static int __attribute__((unused))
load_view_file(const slurm_conf_t *conf, pairs_t *out)
{
	agora_err_t err = { { 0 } };
	agora_view_t v;
	char path[4096];

	snprintf(path, sizeof(path), "%s/agora_view.json",
		 conf->state_save_location ? conf->state_save_location : ".");
	if (agora_view_load(path, &v, NULL, &err)) {
		ac_err("Slurm %d.%d has no SlurmctldPlugstack; Agora's view is the file %s, not readable here: %s\n",
		       SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		       SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER), path,
		       err.text);
		return -1;
	}
	agora_view_render(&v, NULL, fmt_time, pairs_add, out);
	agora_view_free(&v);
	return 1;
}

static int read_full_view(const slurm_conf_t *conf, pairs_t *full)
{
	agora_err_t err = { { 0 } };
	agora_view_t v;
	char path[4096];
	uid_t uid = getuid();

	if (uid != 0 && uid != conf->slurm_user_id)
		return 0;
	snprintf(path, sizeof(path), "%s/agora_view.json",
		 conf->state_save_location ? conf->state_save_location : ".");
	if (agora_view_load(path, &v, NULL, &err)) {
		printf("# PrivateData hides parts of the view; the full one is not readable here (");
		put_safe(err.text, 0);
		printf(")\n");
		return 0;
	}
	agora_view_render(&v, NULL, fmt_time, pairs_add, full);
	agora_view_free(&v);
	printf("# full view read from %s (PrivateData hides parts of it from other users)\n",
	       path);
	return 1;
}

static int show_credits(const pairs_t *p)
{
	credit_row_t *rows = NULL, r;
	size_t i, n_rows = 0;
	const char *hidden = pairs_get(p, "Credit");

	printf("%-24s %12s %12s %12s %8s\n", "ACCOUNT", "CREDIT_GPUH",
	       "QUOTA_GPUH", "USAGE_GPUH", "RHO");
	for (i = 0; i < p->n; i++) {
		if (strncmp(p->names[i], "Credit[", 7) ||
		    parse_credit(p->names[i], p->values[i], &r))
			continue;
		{
			void *nr = realloc(rows, (n_rows + 1) * sizeof(*rows));

			if (!nr) {
				perror("agoractl");
				free(rows);
				return 1;
			}
			rows = nr;
		}
		rows[n_rows++] = r;
	}
	qsort(rows, n_rows, sizeof(*rows), cmp_credit);
	if (ac_json) {
		json_object *a = json_object_new_array();

		for (i = 0; i < n_rows; i++) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "account",
					       ac_str(rows[i].account));
			json_object_object_add(o, "credit_gpu_hours",
					       ac_num(rows[i].credit));
			json_object_object_add(o, "quota_gpu_hours",
					       ac_num(rows[i].quota));
			json_object_object_add(o, "usage_gpu_hours",
					       ac_num(rows[i].usage));
			json_object_object_add(
				o, "rho",
				rows[i].has_rho ? ac_num(rows[i].rho) : NULL);
			json_object_array_add(a, o);
		}
		ac_add("accounts", a);
		if (hidden)
			ac_warn("per-account rows %s", hidden);
	}
	for (i = 0; i < n_rows; i++) {
		put_safe(rows[i].account, 24);
		printf(" %12.2f %12.2f %12.2f ", rows[i].credit, rows[i].quota,
		       rows[i].usage);
		if (rows[i].has_rho)
			printf("%8.2f\n", rows[i].rho);
		else
			printf("%8s\n", "-");
	}
	if (hidden) {
		printf("# per-account rows ");
		put_safe(hidden, 0);
		printf("\n");
	}
	free(rows);
	return 0;
}

static void show_leases(const pairs_t *p)
{
	size_t i;
	const char *hidden = pairs_get(p, "LeaseJobs");
	json_object *a = json_object_new_array();

	printf("%-14s %s\n", "JOBID", "LEASE");
	for (i = 0; i < p->n; i++) {
		const char *k = p->names[i];
		size_t len = strlen(k);

		if (strncmp(k, "Lease[", 6) || len < 7 || k[len - 1] != ']')
			continue;
		printf("%-14.*s ", (int) (len - 7), k + 6);
		put_safe(p->values[i], 0);
		printf("\n");
		{
			json_object *o = json_object_new_object();
			agora_view_lease_t l;
			char id[32];

			snprintf(id, sizeof(id), "%.*s", (int) (len - 7),
				 k + 6);
			json_object_object_add(o, "job_id", ac_str(id));
			if (!parse_lease(p->values[i], &l)) {
				json_object_object_add(o, "gpus",
						       ac_int(l.gpus));
				json_object_object_add(
					o, "state",
					ac_str(l.grace ? "grace" : "active"));
			}
			json_object_object_add(o, "lease",
					       ac_str(p->values[i]));
			json_object_array_add(a, o);
		}
	}
	ac_add("leases", a);
	if (hidden && ac_json)
		ac_warn("job ids %s", hidden);
	if (hidden) {
		printf("# job ids ");
		put_safe(hidden, 0);
		printf("\n");
	}
}

/* The view's apps and leases, back from the pairs (for metrics). */
static void pairs_view(const pairs_t *p, agora_view_t *v)
{
	credit_row_t r;
	agora_view_lease_t l;

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < p->n; i++) {
		if (!strncmp(p->names[i], "Credit[", 7) &&
		    !parse_credit(p->names[i], p->values[i], &r)) {
			agora_view_app_t *a = realloc(
				v->apps, (v->n_apps + 1) * sizeof(*a));

			if (!a)
				continue;
			v->apps = a;
			a += v->n_apps++;
			memset(a, 0, sizeof(*a));
			snprintf(a->name, sizeof(a->name), "%s", r.account);
			a->credit = r.credit;
			a->quota = r.quota;
			a->usage = r.usage;
			a->rho = r.rho;
			a->has_rho = r.has_rho;
		} else if (!strncmp(p->names[i], "Lease[", 6) &&
			   !parse_lease(p->values[i], &l)) {
			agora_view_lease_t *n = realloc(
				v->leases, (v->n_leases + 1) * sizeof(*n));

			if (!n)
				continue;
			v->leases = n;
			n[v->n_leases++] = l;
		}
	}
}

/* Ask slurmctld for Agora's view (the full one when PrivateData hides
 * parts and the file is readable).  1 with *p set, or 0 after a message
 * (*conf to free in both cases when set). */
static int load_pairs(slurm_conf_t **conf, pairs_t *rpc, pairs_t *full,
		      pairs_t **p)
{
	ListIterator it, kit;
	agoractl_plugin_params_t *pp;
	agoractl_pair_t *kp;
	int found = 0;

	*p = rpc;
	if (slurm_load_ctl_conf((time_t) 0, conf) != SLURM_SUCCESS) {
		*conf = NULL;
		ac_err("cannot reach slurmctld: %s",
		       slurm_strerror(slurm_get_errno()));
		return 0;
	}
#if AGORA_HAVE_CTLD_PLUGSTACK
	if ((*conf)->slurmctld_plugstack_conf) {
		it = slurm_list_iterator_create(
			(*conf)->slurmctld_plugstack_conf);
		while ((pp = slurm_list_next(it))) {
			if (!pp->name || strcmp(pp->name, "slurmctld/agora"))
				continue;
			found = 1;
			kit = slurm_list_iterator_create(pp->key_pairs);
			while ((kp = slurm_list_next(kit)))
				pairs_add(rpc, kp->name, kp->value);
			slurm_list_iterator_destroy(kit);
		}
		slurm_list_iterator_destroy(it);
	}
#else
	/*
	 * 23.02 removed SlurmctldPlugstack: the select/cons_tres wrapper
	 * carries the pairs in the select section (agora_view_pairs.h);
	 * without it, the view file is the source.
	 */
	(void) pp;
	if ((*conf)->select_conf_key_pairs) {
		kit = slurm_list_iterator_create(
			(*conf)->select_conf_key_pairs);
		while ((kp = slurm_list_next(kit)))
			pairs_add(rpc, kp->name, kp->value);
		slurm_list_iterator_destroy(kit);
	}
	(void) it;
	if (pairs_get(rpc, "View"))
		found = 1;
	else
		found = load_view_file(*conf, rpc);
#endif
	if (found <= 0) {
		if (!found)
			ac_err("slurmctld publishes no Agora view: add SlurmctldPlugstack=slurmctld/agora to slurm.conf");
		return 0;
	}
	if ((pairs_get(rpc, "Credit") || pairs_get(rpc, "LeaseJobs")) &&
	    read_full_view(*conf, full))
		*p = full;
	return 1;
}

static int view_main(int argc, char **argv)
{
	slurm_conf_t *conf = NULL;
	pairs_t rpc = { 0 }, full = { 0 }, *p = &rpc;
	const char *cmd = argv[1], *view;
	bool metrics = !strcmp(cmd, "metrics");
	int rc = 0, ok;
	size_t i;

	if (!metrics && argc != 2)
		return usage(stderr);
	slurm_init(NULL);
	ok = load_pairs(&conf, &rpc, &full, &p);
	if (metrics) {
		agora_view_t v;

		pairs_view(p, &v);
		rc = agoractl_metrics_main(argc - 1, argv + 1, ok ? &v : NULL);
		agora_view_free(&v);
		goto out;
	}
	if (!ok) {
		rc = 1;
		goto out;
	}
	if ((view = pairs_get(p, "View"))) {
		printf("# view of ");
		put_safe(view, 0);
		printf("\n");
		ac_add("view", ac_str(view));
	}
	if (!strcmp(cmd, "show")) {
		json_object *o = json_object_new_object();

		for (i = 0; i < p->n; i++) {
			put_safe(p->names[i], 0);
			putchar('=');
			put_safe(p->values[i], 0);
			putchar('\n');
			json_object_object_add(o, p->names[i],
					       ac_str(p->values[i]));
		}
		ac_add("pairs", o);
	} else if (!strcmp(cmd, "leases")) {
		show_leases(p);
	} else {
		rc = show_credits(p);
	}
out:
	pairs_free(&rpc);
	pairs_free(&full);
	if (conf)
		slurm_free_ctl_conf(conf);
	slurm_fini();
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (ac_out_init(&argc, argv))
		return 1;
	if (argc >= 2 && agoractl_fed_command(argv[1]))
		return ac_finish(agoractl_fed_main(argc - 1, argv + 1));
	if (argc >= 2 && agoractl_loan_command(argv[1]))
		return ac_finish(agoractl_loan_main(argc - 1, argv + 1));
	if (argc >= 2 && agoractl_est_command(argv[1]))
		return ac_finish(agoractl_est_main(argc - 1, argv + 1));
	if (argc < 2)
		return ac_finish(usage(stderr));
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help"))
		return ac_finish(usage(stdout));
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("agoractl %s (built against Slurm %d.%d.%d)\n",
		       PACKAGE_VERSION,
		       SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		       SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
		       SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
		ac_add("version", ac_str(PACKAGE_VERSION));
		return ac_finish(0);
	}
	if (strcmp(cmd, "credits") && strcmp(cmd, "leases") &&
	    strcmp(cmd, "show") && strcmp(cmd, "metrics")) {
		ac_err("unknown command '%s'", cmd);
		return ac_finish(usage(stderr));
	}
	return ac_finish(view_main(argc, argv));
}
