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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

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
	char account[128];
	double credit, quota, usage, rho;
	int has_rho;
} credit_row_t;

static int usage(FILE *f)
{
	fprintf(f, "usage: agoractl credits | leases | show\n"
		   "  credits  accounts: credit, quota, usage (GPU-h), rho\n"
		   "  leases   running jobs' GPU leases\n"
		   "  show     all key=value pairs slurmctld/agora publishes\n"
		   "The cluster is the one of SLURM_CONF (as for scontrol).\n");
	return f == stderr ? 2 : 0;
}

static int cmp_credit(const void *a, const void *b)
{
	const credit_row_t *x = a, *y = b;

	if (x->credit != y->credit)
		return x->credit < y->credit ? -1 : 1;
	return strcmp(x->account, y->account);
}

/* Parse "Credit[acct]" = "credit=C quota=Q usage=U GPU-h rho=R". */
static int parse_credit(const agoractl_pair_t *kp, credit_row_t *r)
{
	const char *lb = strchr(kp->name, '['), *rb = strrchr(kp->name, ']');
	const char *rho;
	size_t n;

	if (!lb || !rb || rb <= lb + 1 || !kp->value)
		return -1;
	n = (size_t) (rb - lb - 1);
	if (n >= sizeof(r->account))
		n = sizeof(r->account) - 1;
	memcpy(r->account, lb + 1, n);
	r->account[n] = '\0';
	if (sscanf(kp->value, "credit=%lf quota=%lf usage=%lf", &r->credit,
		   &r->quota, &r->usage) != 3)
		return -1;
	rho = strstr(kp->value, "rho=");
	r->has_rho = rho && sscanf(rho, "rho=%lf", &r->rho) == 1;
	return 0;
}

int main(int argc, char **argv)
{
	slurm_conf_t *conf = NULL;
	ListIterator it, kit;
	agoractl_plugin_params_t *pp;
	agoractl_pair_t *kp;
	const char *cmd;
	int found = 0, n_rows = 0, i;
	credit_row_t *rows = NULL;

	if (argc != 2)
		return usage(stderr);
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help"))
		return usage(stdout);
	if (strcmp(cmd, "credits") && strcmp(cmd, "leases") &&
	    strcmp(cmd, "show")) {
		fprintf(stderr, "agoractl: unknown command '%s'\n", cmd);
		return usage(stderr);
	}
	slurm_init(NULL);
	if (slurm_load_ctl_conf((time_t) 0, &conf) != SLURM_SUCCESS) {
		fprintf(stderr, "agoractl: cannot reach slurmctld: %s\n",
			slurm_strerror(slurm_get_errno()));
		slurm_fini();
		return 1;
	}
	if (conf->slurmctld_plugstack_conf) {
		it = slurm_list_iterator_create(conf->slurmctld_plugstack_conf);
		while ((pp = slurm_list_next(it))) {
			if (!pp->name || strcmp(pp->name, "slurmctld/agora"))
				continue;
			found = 1;
			kit = slurm_list_iterator_create(pp->key_pairs);
			while ((kp = slurm_list_next(kit))) {
				if (!strcmp(cmd, "show")) {
					printf("%s=%s\n", kp->name,
					       kp->value ? kp->value : "");
				} else if (!strcmp(cmd, "leases")) {
					if (!strncmp(kp->name, "Lease[", 6))
						printf("%-14.*s %s\n",
						       (int) strlen(kp->name) -
							       7,
						       kp->name + 6, kp->value);
					else if (!strcmp(kp->name, "View"))
						printf("# view of %s\n",
						       kp->value);
				} else if (!strncmp(kp->name, "Credit[", 7)) {
					credit_row_t r;

					if (parse_credit(kp, &r))
						continue;
					rows = realloc(rows,
						       (size_t) (n_rows + 1) *
							       sizeof(*rows));
					if (!rows) {
						perror("agoractl");
						return 1;
					}
					rows[n_rows++] = r;
				} else if (!strcmp(kp->name, "View")) {
					printf("# view of %s\n", kp->value);
				}
			}
			slurm_list_iterator_destroy(kit);
		}
		slurm_list_iterator_destroy(it);
	}
	if (!found) {
		fprintf(stderr,
			"agoractl: slurmctld publishes no Agora view: add SlurmctldPlugstack=slurmctld/agora to slurm.conf\n");
		slurm_free_ctl_conf(conf);
		slurm_fini();
		return 1;
	}
	if (!strcmp(cmd, "credits")) {
		qsort(rows, (size_t) n_rows, sizeof(*rows), cmp_credit);
		printf("%-24s %12s %12s %12s %8s\n", "ACCOUNT", "CREDIT_GPUH",
		       "QUOTA_GPUH", "USAGE_GPUH", "RHO");
		for (i = 0; i < n_rows; i++) {
			printf("%-24s %12.2f %12.2f %12.2f ", rows[i].account,
			       rows[i].credit, rows[i].quota, rows[i].usage);
			if (rows[i].has_rho)
				printf("%8.2f\n", rows[i].rho);
			else
				printf("%8s\n", "-");
		}
	}
	free(rows);
	slurm_free_ctl_conf(conf);
	slurm_fini();
	return 0;
}
