/*
 * sched/agora - Agora's scheduler plugin shell.
 *
 * - Reads agora.conf (found like other extra Slurm config files, beside
 *   slurm.conf).  A bad file never takes slurmctld down: at start-up the
 *   plugin logs the error (file:line: key: why) and runs with the safe
 *   defaults (no auction-managed partitions, backfill only); on
 *   "scontrol reconfigure" it logs the error and keeps the previous
 *   configuration.
 * - Embeds the stock sched/backfill plugin (EmbedBackfill=yes, default), so
 *   a cluster running sched/agora schedules at least as well as one
 *   running sched/backfill.
 * - Starts Agora's own scheduling thread (agora_thread.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/plugin.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "sched_agora.h"

const char plugin_name[] =
	"Agora scheduler (priority+credit, finish-time-fair auctions)";
const char plugin_type[] = "sched/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

agora_conf_t agora_conf;
pthread_mutex_t agora_conf_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
	int (*reconfig)(void);
} embedded_sched_ops_t;

static const char *embedded_syms[] = { "sched_p_reconfig" };
static embedded_sched_ops_t bf_ops;
static plugin_context_t *bf_context = NULL;
static bool bf_running = false;

/*
 * Load agora.conf into *out.  Returns SLURM_SUCCESS, or SLURM_ERROR after
 * logging one error line naming file, line and key (then *out is
 * untouched).  A missing file is not an error: defaults apply.
 */
static int load_conf(agora_conf_t *out, bool *found)
{
	char name[] = "agora.conf";
	char *path = get_extra_conf_path(name);
	agora_err_t err = { { 0 } };
	int rc = SLURM_SUCCESS;

	*found = true;
	if (agora_conf_parse_file(path, out, &err)) {
		if (errno == ENOENT) {
			*found = false;
			info("%s: %s not found, using defaults", plugin_type,
			     path);
		} else {
			error("%s: rejected configuration: %s", plugin_type,
			      err.text);
			rc = SLURM_ERROR;
		}
	}
	xfree(path);
	return rc;
}

static void log_conf(const agora_conf_t *c, const char *when)
{
	char *parts = NULL;
	size_t i;

	for (i = 0; i < c->n_auction_partitions; i++)
		xstrfmtcat(parts, "%s%s", i ? "," : "",
			   c->auction_partitions[i]);
	info("%s: %s: SchedulerInterval=%d EmbedBackfill=%s AuctionPartitions=%s AppDefinition=%s FairnessKnob=%.2f LeaseTime=%d GraceTime=%d CreditHalfLife=%.1fh DefaultQuota=%.1f AccountQuotas=%zu",
	     plugin_type, when, c->sched_interval_s,
	     c->embed_backfill ? "yes" : "no", parts ? parts : "(none)",
	     agora_app_def_name(c->app_def), c->fairness_knob, c->lease_s,
	     c->grace_s, c->credit_half_life_h, c->default_quota, c->n_quotas);
	xfree(parts);
}

extern int init(void)
{
	agora_conf_t c;
	bool found;

	agora_conf_defaults(&c);
	if (load_conf(&c, &found) != SLURM_SUCCESS) {
		error("%s: starting in safe mode: defaults, no auction-managed partitions; fix agora.conf and run 'scontrol reconfigure'",
		      plugin_type);
	}
	slurm_mutex_lock(&agora_conf_lock);
	agora_conf_free(&agora_conf);
	agora_conf = c;
	slurm_mutex_unlock(&agora_conf_lock);
	log_conf(&agora_conf, "loaded");

	if (slurmctld_config.scheduling_disabled) {
		info("%s: scheduling disabled, not starting threads",
		     plugin_type);
		return SLURM_SUCCESS;
	}

	if (agora_conf.embed_backfill) {
		bf_context = plugin_context_create(
			"sched", "sched/backfill", (void **) &bf_ops,
			embedded_syms, sizeof(embedded_syms));
		if (!bf_context) {
			/* Without backfill only the main FIFO scheduler
			 * runs: worse, but safe and loudly reported. */
			error("%s: cannot load embedded sched/backfill; only the main scheduler and Agora's thread will start jobs",
			      plugin_type);
		} else {
			bf_running = true;
			info("%s: embedded sched/backfill started",
			     plugin_type);
		}
	}
	if (agora_conf.n_auction_partitions &&
	    !xstrcasestr(slurm_conf.sched_params, "defer"))
		info("%s: AuctionPartitions set without SchedulerParameters=defer: interactive (salloc/srun) jobs may start at submission outside the auction",
		     plugin_type);
	slurm_mutex_lock(&agora_conf_lock);
	agora_policy_reset();
	slurm_mutex_unlock(&agora_conf_lock);
	agora_thread_start();
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	agora_thread_stop();
	agora_policy_fini();
	if (bf_context) {
		plugin_context_destroy(bf_context);
		bf_context = NULL;
		bf_running = false;
	}
	slurm_mutex_lock(&agora_conf_lock);
	agora_conf_free(&agora_conf);
	slurm_mutex_unlock(&agora_conf_lock);
	info("%s: stopped", plugin_type);
}

extern int sched_p_reconfig(void)
{
	agora_conf_t c;
	bool found;

	agora_conf_defaults(&c);
	if (load_conf(&c, &found) != SLURM_SUCCESS) {
		error("%s: keeping the previous configuration", plugin_type);
		agora_conf_free(&c);
	} else {
		slurm_mutex_lock(&agora_conf_lock);
		if (c.embed_backfill != agora_conf.embed_backfill)
			error("%s: EmbedBackfill changes only take effect after a slurmctld restart",
			      plugin_type);
		c.embed_backfill = agora_conf.embed_backfill;
		agora_conf_free(&agora_conf);
		agora_conf = c;
		agora_policy_reset();
		slurm_mutex_unlock(&agora_conf_lock);
		log_conf(&agora_conf, "reconfigured");
	}
	if (bf_running && bf_ops.reconfig)
		(*bf_ops.reconfig)();
	agora_thread_wake();
	return SLURM_SUCCESS;
}
