/*
 * job_submit/agora - holds a federated GPU batch job at its origin, so that
 * agorad's cross-cluster auction decides where it runs (doc/federation.md).
 *
 * Slurm's federation sends no sibling copy of a held job
 * (fed_mgr_job_allocate() submits to siblings only when the job is not
 * held); agorad pins the winner with Clusters=<winner> and releases the
 * job, and the release submits it to that sibling only.  This plugin only
 * decides whether a new job waits for that auction:
 *   - FedAuction=yes in agora.conf, the cluster is in a federation, and
 *     PrioritySiteFactorPlugin is site_factor/agora (which releases a hold
 *     no one decided within FedAuctionTimeout: fail open);
 *   - agorad is alive: its will-run requests (AdminComment
 *     AGORA_FED_PLAN, which only SlurmUser/root/admins can set) reached
 *     this controller within FedAuctionTimeout.  With agorad down, new
 *     jobs are not held at all;
 *   - a plain batch GPU job at its origin: not a sibling copy (job id
 *     set by the origin), not an array or het job, no dependency, not
 *     already held or given a priority, no AdminComment, and not limited
 *     to one cluster by -M.
 * It then sets priority 0 (Slurm shows JobHeldUser: the user may release
 * the job, which puts it back to stock behaviour) and the AdminComment
 * "Agora: fed hold v1: waiting since T ..." (pol_fed_hold.h).  An update
 * that holds such a job ("scontrol hold") is its owner's or an admin's:
 * job_modify marks the job so, and nothing of Agora releases it.
 *
 * agorad's will-run requests carry the federation-wide usage per app,
 * which this plugin hands to site_factor/agora (agora_export_fed_usage)
 * for the credit term: one credit per team across clusters.
 *
 * With loaning on (Loaning=yes, doc/loaning.md), it also keeps jobs that
 * cannot be requeued off the inference nodes agorad lends: a pending job
 * that may run in a LoanTrainPartitions partition and is not requeueable
 * (--no-requeue, JobRequeue=0 with no --requeue, or not a batch job) gets
 * the nodes of the LoanInferencePartitions partitions added to its
 * excluded nodes (its own --exclude kept), at submission and when an
 * update makes it so (scontrol update job Requeue=0 or Partition=).
 * agorad never preempts such a job, so one started on a lent node would
 * block every reclaim of that node.  job_submit and job_modify run with
 * the config, job, node and partition locks held for reading
 * (job_submit_plugin_submit/modify in 22.05), so the partitions' node
 * bitmaps are read in place.
 */
#define _GNU_SOURCE
#include "config.h"
#include "agora_compat.h"

#include <ctype.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/fed_mgr.h"
#if !AGORA_MODIFY_CHECKED
#include "src/common/assoc_mgr.h"
#endif

#include "agora_conf.h"
#include "agora_fed_marks.h"

const char plugin_name[] =
	"Agora: hold federated GPU jobs at their origin for agorad's auction";
const char plugin_type[] = "job_submit/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init(void);
extern int fini(void);
extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg);
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr,
		      uint32_t submit_uid AGORA_JOB_MODIFY_ERR_MSG);

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static agora_conf_t conf;      /* agora.conf as last read */
static bool conf_ok = false;   /* false: bad or missing file: hold nothing */
static char *conf_path = NULL; /* agora.conf's path, for messages */
static bool loan_part_logged = false; /* unknown partition reported */
static struct timespec conf_mtime;
static time_t conf_checked = 0;
static time_t last_plan = 0; /* agorad's last will-run request */
static bool agorad_alive_logged = false;

typedef void (*fed_usage_fn)(const char *text, time_t now);
static fed_usage_fn fed_usage = NULL;
static bool fed_usage_bound = false;

/* (Re)read agora.conf when it changed; at most every 5 s.  state_lock. */
static void conf_refresh(time_t now)
{
	char *path;
	struct stat st;
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	if (conf_checked && now - conf_checked < 5)
		return;
	conf_checked = now;
	static char conf_name[] = "agora.conf";

	path = get_extra_conf_path(conf_name);
	if (stat(path, &st)) {
		if (conf_ok)
			info("%s: %s is gone: no job is held", plugin_type,
			     path);
		conf_ok = false;
		memset(&conf_mtime, 0, sizeof(conf_mtime));
		xfree(path);
		return;
	}
	if (conf_ok && st.st_mtim.tv_sec == conf_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == conf_mtime.tv_nsec) {
		xfree(path);
		return;
	}
	conf_mtime = st.st_mtim;
	agora_conf_defaults(&c);
	if (agora_conf_parse_file(path, &c, &err)) {
		/* keep the previous configuration, as site_factor/agora does */
		error("%s: %s; keeping the previous configuration (FedAuction=%s)",
		      plugin_type, err.text,
		      conf_ok && conf.fed_auction ? "yes" : "no");
		agora_conf_free(&c);
	} else {
		agora_conf_free(&conf);
		conf = c;
		conf_ok = true;
		loan_part_logged = false;
		info("%s: FedAuction=%s FedAuctionTimeout=%d s; Loaning=%s: %s",
		     plugin_type, conf.fed_auction ? "yes" : "no",
		     conf.fed_auction_timeout_s, conf.loaning ? "yes" : "no",
		     conf.loaning
			     ? "jobs that cannot be requeued are kept off the inference nodes"
			     : "no job's nodes are changed");
	}
	xfree(conf_path);
	conf_path = path;
}

/* site_factor/agora's agora_export_fed_usage, beside this plugin. */
static void bind_fed_usage(void)
{
	Dl_info info;
	char self[PATH_MAX], *path = NULL;
	void *h;

	if (fed_usage_bound)
		return;
	fed_usage_bound = true;
	if (!dladdr((void *) bind_fed_usage, &info) || !info.dli_fname)
		return;
	strlcpy(self, info.dli_fname, sizeof(self));
	xstrfmtcat(path, "%s/site_factor_agora.so", dirname(self));
	if ((h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD)))
		fed_usage = (fed_usage_fn) dlsym(h, "agora_export_fed_usage");
	if (!fed_usage)
		info("%s: %s does not take the federation's usage; the credit term stays per cluster",
		     plugin_type, path);
	xfree(path);
}

static bool asks_gpus(const job_desc_msg_t *d)
{
	return xstrcasestr(d->tres_per_job, "gpu") ||
	       xstrcasestr(d->tres_per_node, "gpu") ||
	       xstrcasestr(d->tres_per_socket, "gpu") ||
	       xstrcasestr(d->tres_per_task, "gpu");
}

/* Why a new job is not held (NULL: hold it).  state_lock held. */
static const char *no_hold(const job_desc_msg_t *d, time_t now)
{
	if (!conf_ok || !conf.fed_auction)
		return "FedAuction=no";
	if (!fed_mgr_fed_rec)
		return "not in a federation";
	if (xstrcmp(slurm_conf.site_factor_plugin, "site_factor/agora"))
		return "site_factor/agora not loaded (no fail-open timeout)";
	if (!last_plan || now - last_plan > conf.fed_auction_timeout_s)
		return "agorad is not running";
	if (d->job_id != NO_VAL)
		return "job id given (a sibling copy or an admin's id)";
	if (!d->script)
		return "not a batch job";
	if (d->array_inx || (d->het_job_offset != NO_VAL))
		return "array or heterogeneous job";
	if (d->dependency && d->dependency[0])
		return "has a dependency";
	if (d->priority != NO_VAL)
		return "held or given a priority at submission";
	if (d->admin_comment)
		return "has an AdminComment";
	if (d->clusters && d->clusters[0] && !strchr(d->clusters, ','))
		return "limited to one cluster";
	if (!asks_gpus(d))
		return "no GPUs";
	return NULL;
}

/* The line of agora.conf that sets key (0 if none), for messages. */
static int conf_key_line(const char *path, const char *key)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	char buf[1024];
	int line = 0, found = 0;
	size_t n = strlen(key);

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		char *p = buf;

		line++;
		while (isspace((unsigned char) *p))
			p++;
		if (!strncasecmp(p, key, n) &&
		    (p[n] == '=' || isspace((unsigned char) p[n]))) {
			found = line;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Is any of the comma-separated partitions (NULL: the default partition)
 * a loan partition of that kind?  Part read lock held. */
static bool in_loan_parts(const char *parts, bool infer)
{
	char *copy, *tok, *save = NULL;
	bool hit = false;

	if (!parts || !*parts)
		return default_part_loc &&
		       agora_conf_loan_partition(&conf, default_part_loc->name,
						 infer);
	copy = xstrdup(parts);
	for (tok = strtok_r(copy, ",", &save); tok && !hit;
	     tok = strtok_r(NULL, ",", &save))
		hit = agora_conf_loan_partition(&conf, tok, infer);
	xfree(copy);
	return hit;
}

/* The nodes of the inference partitions as a hostlist (NULL: none, or a
 * partition agora.conf names does not exist: logged once per
 * configuration, naming the file, line and key).  Part and node read
 * locks held; state_lock held. */
static agora_hostlist_t infer_nodes(void)
{
	agora_hostlist_t hl = hostlist_create(NULL);

	for (size_t i = 0; i < conf.n_loan_infer_partitions; i++) {
		part_record_t *p = find_part_record(
			conf.loan_infer_partitions[i]);
		char *names;

		if (!p) {
			if (!loan_part_logged)
				error("%s: %s:%d: LoanInferencePartitions: no partition '%s' in slurm.conf; jobs that cannot be requeued are not kept off the inference nodes",
				      plugin_type, conf_path,
				      conf_key_line(conf_path,
						    "LoanInferencePartitions"),
				      conf.loan_infer_partitions[i]);
			loan_part_logged = true;
			hostlist_destroy(hl);
			return NULL;
		}
		if (!p->node_bitmap || !bit_set_count(p->node_bitmap))
			continue;
		names = bitmap2node_name(p->node_bitmap);
		hostlist_push(hl, names);
		xfree(names);
	}
	if (!hostlist_count(hl)) {
		hostlist_destroy(hl);
		return NULL;
	}
	return hl;
}

/* The excluded nodes a job that cannot be requeued gets: exc (the job's
 * own, may be NULL) plus the inference partitions' nodes; NULL when exc
 * already excludes them all (or there is nothing to exclude).  xfree()
 * the result.  Locks as infer_nodes(). */
static char *loan_exclude(const char *exc)
{
	agora_hostlist_t inf = infer_nodes(), all;
	char *name, *out = NULL;
	bool missing = false;

	if (!inf)
		return NULL;
	/* a list Slurm cannot read (a bad range, too many names): left as
	 * it is, so that Slurm refuses the request with its own error
	 * (hostlist_create() gives NULL, which the calls below crash on) */
	if (!(all = hostlist_create(exc && *exc ? exc : NULL))) {
		hostlist_destroy(inf);
		return NULL;
	}
	while ((name = hostlist_shift(inf))) {
		if (hostlist_find(all, name) < 0) {
			hostlist_push_host(all, name);
			missing = true;
		}
		free(name);
	}
	hostlist_destroy(inf);
	if (missing) {
		hostlist_uniq(all);
		out = hostlist_ranged_string_xmalloc(all);
	}
	hostlist_destroy(all);
	return out;
}

/* The excluded nodes of a job that no longer needs to be kept off the
 * inference nodes: exc less the inference partitions' nodes ("" when
 * none is left: update_job() clears the list), or NULL to leave exc as
 * it is: it lacks one of them, so the exclusion is not the one
 * loan_exclude() made.  xfree() the result.  Locks as infer_nodes(). */
static char *loan_unexclude(const char *exc)
{
	agora_hostlist_t inf, all;
	char *name, *out = NULL;
	bool ours = true;

	if (!exc || !*exc || !(all = hostlist_create(exc)))
		return NULL;
	if (!(inf = infer_nodes())) {
		hostlist_destroy(all);
		return NULL;
	}
	while (ours && (name = hostlist_shift(inf))) {
		int at = hostlist_find(all, name);

		if (at < 0)
			ours = false;
		else
			while (at >= 0) {
				hostlist_delete_nth(all, at);
				at = hostlist_find(all, name);
			}
		free(name);
	}
	hostlist_destroy(inf);
	if (ours)
		out = hostlist_count(all) ? hostlist_ranged_string_xmalloc(all)
					  : xstrdup("");
	hostlist_destroy(all);
	return out;
}

/* Why a job is not kept off the inference nodes (NULL: keep it off).
 * requeue: its --requeue (NO_VAL16: not given), batch: has a script,
 * parts: its partitions, req_nodes: its --nodelist.  state_lock held. */
static const char *no_loan_exclude(uint16_t requeue, bool batch,
				   const char *parts, const char *req_nodes)
{
	if (!conf_ok || !conf.loaning || !conf.n_loan_infer_partitions)
		return "Loaning=no";
	if (batch && (requeue == NO_VAL16 ? slurm_conf.job_requeue : requeue))
		return "requeueable";
	if (!in_loan_parts(parts, false))
		return "not in a training partition";
	if (in_loan_parts(parts, true))
		return "also asks for an inference partition";
	if (req_nodes && *req_nodes)
		return "asks for nodes by name (--nodelist)";
	return NULL;
}

extern int init(void)
{
	slurm_mutex_lock(&state_lock);
	conf_refresh(time(NULL));
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	slurm_mutex_lock(&state_lock);
	agora_conf_free(&conf);
	xfree(conf_path);
	conf_ok = false;
	conf_checked = 0;
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg)
{
	time_t now = time(NULL);
	const char *why;
	char *usage, *mark;

	(void) err_msg;
	slurm_mutex_lock(&state_lock);
	conf_refresh(now);
	/* agorad's will-run request: only SlurmUser or root sets this
	 * AdminComment (validate_job_create_req() refuses it from others) */
	if (job_desc->admin_comment &&
	    !strncmp(job_desc->admin_comment, AGORA_FED_PLAN,
		     strlen(AGORA_FED_PLAN)) &&
	    (submit_uid == 0 || submit_uid == slurm_conf.slurm_user_id)) {
		if (!last_plan ||
		    now - last_plan > conf.fed_auction_timeout_s ||
		    !agorad_alive_logged) {
			info("%s: agorad is alive: federated GPU jobs wait for its auction",
			     plugin_type);
			agorad_alive_logged = true;
		}
		last_plan = now;
		usage = strstr(job_desc->admin_comment, AGORA_FED_USAGE);
		if (usage) {
			bind_fed_usage();
			if (fed_usage)
				fed_usage(usage + strlen(AGORA_FED_USAGE), now);
		}
		slurm_mutex_unlock(&state_lock);
		return SLURM_SUCCESS;
	}
	why = no_loan_exclude(job_desc->requeue, job_desc->script != NULL,
			      job_desc->partition, job_desc->req_nodes);
	if (!why) {
		char *exc = loan_exclude(job_desc->exc_nodes);

		if (exc) {
			debug("%s: a job that cannot be requeued: excluded nodes %s (loaned inference nodes kept out)",
			      plugin_type, exc);
			xfree(job_desc->exc_nodes);
			job_desc->exc_nodes = exc;
		}
	}
	why = no_hold(job_desc, now);
	if (why) {
		if (agorad_alive_logged && conf_ok && conf.fed_auction &&
		    last_plan && now - last_plan > conf.fed_auction_timeout_s) {
			info("%s: no request from agorad for %ld s: new jobs are not held (fail open)",
			     plugin_type, (long) (now - last_plan));
			agorad_alive_logged = false;
		}
		debug2("%s: not held: %s", plugin_type, why);
		slurm_mutex_unlock(&state_lock);
		return SLURM_SUCCESS;
	}
	mark = pol_fed_mark_waiting(now, conf.fed_auction_timeout_s);
	if (!mark) {
		error("%s: out of memory: job not held for the auction",
		      plugin_type);
		slurm_mutex_unlock(&state_lock);
		return SLURM_SUCCESS;
	}
	job_desc->priority = 0;
	xfree(job_desc->admin_comment);
	job_desc->admin_comment = xstrdup(mark);
	free(mark);
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

/* May uid update the job at all (Slurm's own rule, which 22.05 applies
 * only after job_modify(): agora_compat.h AGORA_MODIFY_CHECKED)?  An
 * update Slurm refuses must leave no trace in the job. */
static bool may_update(const job_record_t *job_ptr, uint32_t uid)
{
#if AGORA_MODIFY_CHECKED
	(void) job_ptr;
	(void) uid;
	return true;
#else
	return uid == job_ptr->user_id || validate_operator(uid) ||
	       assoc_mgr_is_user_acct_coord(acct_db_conn, uid,
					    job_ptr->account);
#endif
}

/* "scontrol hold" (or uhold) of a job that carries an Agora federation
 * mark: the hold is its owner's or an admin's, and neither agorad nor the
 * fail-open may undo it, so the mark says so (pol_fed_hold.h).  Written
 * into the job itself: a user may not set an AdminComment through the
 * update, and update_job holds the job write lock. */
static void fed_foreign_hold(const job_desc_msg_t *job_desc,
			     job_record_t *job_ptr, uint32_t submit_uid)
{
	pol_fed_mark_t m;
	char *mark;

	pol_fed_mark_parse(job_ptr->admin_comment, &m);
	if (!pol_fed_hold_update_is_foreign(&m, job_desc->priority == 0,
					    job_desc->admin_comment))
		return;
	/* a hold by someone who may not make it: Slurm refuses the whole
	 * update after this, and the job must stay Agora's */
	if (!may_update(job_ptr, submit_uid)) {
		debug("%s: %pJ: a hold by uid %u, who may not update it: its federation mark stays",
		      plugin_type, job_ptr, submit_uid);
		return;
	}
	if (!(mark = pol_fed_mark_foreign(job_ptr->admin_comment))) {
		error("%s: out of memory: %pJ keeps its federation mark",
		      plugin_type, job_ptr);
		return;
	}
	info("%s: %pJ held by uid %u: its federation hold is not Agora's any more",
	     plugin_type, job_ptr, submit_uid);
	xfree(job_ptr->admin_comment);
	job_ptr->admin_comment = xstrdup(mark);
	free(mark);
}

/* An update of a pending job that leaves it unable to be requeued and in
 * a training partition (Requeue=0, Partition=, or ExcNodeList=): the
 * inference partitions' nodes are added to the excluded nodes it will
 * have.  A running job is left alone (Slurm changes its excluded nodes
 * only while it pends). */
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr,
		      uint32_t submit_uid AGORA_JOB_MODIFY_ERR_MSG)
{
	const char *why, *exc;
	char *out;
	uint16_t requeue;

	if (!job_ptr || !job_ptr->details || !IS_JOB_PENDING(job_ptr))
		return SLURM_SUCCESS;
	if (job_desc->priority != NO_VAL)
		fed_foreign_hold(job_desc, job_ptr, submit_uid);
	if (job_desc->requeue == NO_VAL16 && !job_desc->partition &&
	    !job_desc->exc_nodes)
		return SLURM_SUCCESS;
	slurm_mutex_lock(&state_lock);
	conf_refresh(time(NULL));
	requeue = job_desc->requeue != NO_VAL16 ? job_desc->requeue
						: job_ptr->details->requeue;
	why = no_loan_exclude(
		requeue, job_ptr->batch_flag != 0,
		job_desc->partition ? job_desc->partition : job_ptr->partition,
		job_desc->req_nodes ? job_desc->req_nodes
				    : job_ptr->details->req_nodes);
	if (why) {
		/* The update ends the reason for the exclusion (Requeue=1, a
		 * move to an inference partition): the inference nodes that
		 * loan_exclude() added go, or a job moved to "infer" would
		 * exclude every node of its partition and pend for good. */
		if (conf_ok && conf.loaning && conf.n_loan_infer_partitions &&
		    !job_desc->exc_nodes &&
		    (out = loan_unexclude(job_ptr->details->exc_nodes))) {
			info("%s: %pJ may be requeued or asks for an inference partition now (%s): excluded nodes %s -> %s",
			     plugin_type, job_ptr, why,
			     job_ptr->details->exc_nodes, *out ? out : "none");
			job_desc->exc_nodes = out;
		} else {
			debug2("%s: %pJ keeps its excluded nodes: %s",
			       plugin_type, job_ptr, why);
		}
		slurm_mutex_unlock(&state_lock);
		return SLURM_SUCCESS;
	}
	exc = job_desc->exc_nodes ? job_desc->exc_nodes
				  : job_ptr->details->exc_nodes;
	out = loan_exclude(exc);
	if (out) {
		info("%s: %pJ cannot be requeued: excluded nodes %s (loaned inference nodes kept out)",
		     plugin_type, job_ptr, out);
		xfree(job_desc->exc_nodes);
		job_desc->exc_nodes = out;
	}
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}
