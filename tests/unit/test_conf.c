/* Unit tests of the agora.conf parser (common/base/agora_conf.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "agora_conf.h"

static void test_conf_app_name(void **state)
{
	agora_conf_t c;
	char *n;

	(void) state;
	agora_conf_defaults(&c);
	n = agora_conf_app_name(&c, "vision", 1001, "sweep_lr3");
	assert_string_equal(n, "vision");
	free(n);
	n = agora_conf_app_name(&c, NULL, 1001, NULL);
	assert_string_equal(n, "");
	free(n);
	c.app_def = AGORA_APP_USER;
	n = agora_conf_app_name(&c, "vision", 1001, "sweep_lr3");
	assert_string_equal(n, "user:1001");
	free(n);
	/* name_prefix: the prefix is the app, the account keeps the credit */
	c.app_def = AGORA_APP_NAME_PREFIX;
	n = agora_conf_app_name(&c, "vision", 1001, "sweep_lr3");
	assert_string_equal(n, "vision");
	free(n);
	/* the same keyed, without allocating (per-job lookups) */
	{
		char key[64], longer[100];

		agora_conf_app_key(&c, "vision", 1001, key);
		assert_string_equal(key, "vision");
		agora_conf_app_key(&c, NULL, 1001, key);
		assert_string_equal(key, "(none)");
		memset(longer, 'x', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = '\0';
		agora_conf_app_key(&c, longer, 1001, key);
		assert_int_equal(strlen(key), 63); /* 46 + '~' + 16 hex */
		c.app_def = AGORA_APP_USER;
		agora_conf_app_key(&c, "vision", 1001, key);
		assert_string_equal(key, "user:1001");
	}
	agora_conf_free(&c);
}

static void test_conf_defaults_when_empty(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(agora_conf_parse_string("\n# only a comment\n  \n",
						 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.sched_interval_s, 5);
	assert_true(c.embed_backfill);
	assert_int_equal(c.lease_s, 600);
	assert_int_equal(c.app_def, AGORA_APP_ACCOUNT);
	assert_true(c.fairness_knob > 0.79 && c.fairness_knob < 0.81);
	assert_int_equal(c.n_auction_partitions, 0);
	assert_int_equal(c.placement, AGORA_PLACEMENT_AGORA);
	assert_null(c.topology_model);
	agora_conf_free(&c);
}

static void test_conf_all_keys_parse(void **state)
{
	const char *text = "SchedulerInterval=2\n"
			   "embedbackfill = no   # case-insensitive keys\n"
			   "AuctionPartitions=gpu, train\n"
			   "AppDefinition=name_prefix\n"
			   "AppNameSeparator=-\n"
			   "FairnessKnob=0.5\n"
			   "LeaseTime=15m\n"
			   "GraceTime=30s\n"
			   "CreditHalfLife=24\n"
			   "CreditPeriod=168\n"
			   "DefaultQuota=250.5\n"
			   "AccountQuota=vision:1000\n"
			   "AccountQuota=nlp:2000\n"
			   "TopologyModel=/etc/slurm/agora-topo.json\n"
			   "Placement=Stock\n"
			   "CreditWeight=5000\n";
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(agora_conf_parse_string(text, "t.conf", &c, &err), 0);
	assert_int_equal(c.sched_interval_s, 2);
	assert_false(c.embed_backfill);
	assert_int_equal(c.n_auction_partitions, 2);
	assert_string_equal(c.auction_partitions[0], "gpu");
	assert_string_equal(c.auction_partitions[1], "train");
	assert_null(c.auction_partitions[2]);
	assert_true(agora_conf_auction_partition(&c, "train"));
	assert_false(agora_conf_auction_partition(&c, "debug"));
	assert_int_equal(c.app_def, AGORA_APP_NAME_PREFIX);
	assert_int_equal(c.app_separator, '-');
	assert_int_equal(c.lease_s, 900);
	assert_int_equal(c.grace_s, 30);
	assert_true(c.default_quota == 250.5);
	assert_true(agora_conf_quota(&c, "nlp") == 2000);
	assert_true(agora_conf_quota(&c, "vision") == 1000);
	assert_true(agora_conf_quota(&c, "other") == 250.5);
	assert_string_equal(c.topology_model, "/etc/slurm/agora-topo.json");
	assert_int_equal(c.credit_weight, 5000);
	assert_int_equal(c.placement, AGORA_PLACEMENT_STOCK);
	assert_string_equal(agora_placement_name(c.placement), "stock");
	assert_string_equal(agora_placement_name(AGORA_PLACEMENT_AGORA),
			    "agora");
	agora_conf_free(&c);
}

/* Each bad input must fail with file:line: key in the message, and leave
 * the previous configuration untouched. */
static const struct {
	const char *text;
	const char *expect; /* substring of the error */
} bad_cases[] = {
	{ "LeaseTime=600\nBogusKey=1\n", "bad.conf:2: BogusKey: unknown key" },
	{ "SchedulerInterval=abc\n",
	  "bad.conf:1: SchedulerInterval: 'abc' is not a duration" },
	{ "SchedulerInterval=0\n",
	  "bad.conf:1: SchedulerInterval: 0 s is out of range" },
	{ "\n\nFairnessKnob=1.5\n",
	  "bad.conf:3: FairnessKnob: 1.5 is out of range" },
	{ "FairnessKnob=nan\n",
	  "bad.conf:1: FairnessKnob: 'nan' is not a number" },
	{ "EmbedBackfill=maybe\n",
	  "bad.conf:1: EmbedBackfill: 'maybe' is not yes/no" },
	{ "AppDefinition=team\n",
	  "bad.conf:1: AppDefinition: 'team' is not one of" },
	{ "AppNameSeparator=ab\n",
	  "bad.conf:1: AppNameSeparator: 'ab' must be a single" },
	{ "LeaseTime=10x\n", "bad.conf:1: LeaseTime: '10x' is not a duration" },
	{ "LeaseTime=600\nLeaseTime=700\n",
	  "bad.conf:2: LeaseTime: given more than once" },
	{ "AccountQuota=vision\n",
	  "bad.conf:1: AccountQuota: 'vision' must be ACCOUNT:GPU_HOURS" },
	{ "AccountQuota=vision:lots\n",
	  "bad.conf:1: AccountQuota: 'lots' is not a number" },
	{ "AccountQuota=a:1\nAccountQuota=a:2\n",
	  "bad.conf:2: AccountQuota: account 'a' is given twice" },
	{ "AuctionPartitions=gpu,x y\n",
	  "bad.conf:1: AuctionPartitions: 'x y' is not a valid name" },
	/* an empty item is not skipped: "," used to give an empty list,
	 * which turns the auction off without a word */
	{ "AuctionPartitions=gpu,,train\n",
	  "bad.conf:1: AuctionPartitions: an empty name in the list" },
	{ "AuctionPartitions=,\n",
	  "bad.conf:1: AuctionPartitions: an empty name in the list" },
	{ "LoanTrainPartitions=train,\n",
	  "bad.conf:1: LoanTrainPartitions: an empty name in the list" },
	{ "just some words\n",
	  "bad.conf:1: 'just some words': expected Key=Value" },
	{ "LeaseTime=\n", "bad.conf:1: LeaseTime: empty value" },
	{ "=5\n", "bad.conf:1: (empty): unknown key" },
	{ "CreditWeight=-1\n", "bad.conf:1: CreditWeight: -1 is out of range" },
	/* issue 19: capped well below the award boost (10^9) */
	{ "CreditWeight=500000000\n",
	  "bad.conf:1: CreditWeight: 500000000 is out of range" },
	{ "Placement=best\n",
	  "bad.conf:1: Placement: 'best' is not one of agora, stock" },
	{ "Placement=stock\nPlacement=agora\n",
	  "bad.conf:2: Placement: given more than once" },
	{ "TopologyModel=\n", "bad.conf:1: TopologyModel: empty value" },
	{ "CheckpointInterval=gpu:30m\n",
	  "bad.conf:1: CheckpointInterval: 'gpu' must be DURATION, partition:NAME:DURATION or qos:NAME:DURATION" },
	{ "CheckpointInterval=qos:long:soon\n",
	  "bad.conf:1: CheckpointInterval: 'soon' is not a duration" },
	{ "CheckpointInterval=10\n",
	  "bad.conf:1: CheckpointInterval: 10 s is out of range" },
	{ "\nCheckpointInterval=partition:gpu:1h\n"
	  "CheckpointInterval=partition:gpu:2h\n",
	  "bad.conf:3: CheckpointInterval: partition:gpu is given twice" },
	{ "CheckpointInterval=30m\nCheckpointInterval=1h\n",
	  "bad.conf:2: CheckpointInterval: the default is given twice" },
	{ "PreemptBudget=-1\n",
	  "bad.conf:1: PreemptBudget: -1 is out of range" },
	{ "PreemptEvery=31d\n",
	  "bad.conf:1: PreemptEvery: 2678400 s is out of range [0, 2592000] s" },
	{ "PreemptUnsaved=sometimes\n",
	  "bad.conf:1: PreemptUnsaved: 'sometimes' is not yes/no" },
	{ "PreemptEvery=often\n",
	  "bad.conf:1: PreemptEvery: 'often' is not a duration (seconds, or with suffix s/m/h/d)" },
};

/* CheckpointInterval: the QOS's, else the partition's, else the bare one,
 * else 0; PreemptBudget. */
static void test_conf_ckpt_keys(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(c.preempt_budget, 1);
	assert_int_equal(c.preempt_every_s, 1800);
	assert_false(c.preempt_unsaved);
	assert_false(c.reserve_worst_app);
	assert_int_equal(agora_conf_ckpt(&c, "gpu", "normal"), 0);
	assert_int_equal(
		agora_conf_parse_string("CheckpointInterval=30m\n"
					"CheckpointInterval=partition:gpu:1h\n"
					"CheckpointInterval=qos:long:2h\n"
					"PreemptBudget=0\n"
					"PreemptEvery=0\n"
					"PreemptUnsaved=yes\n"
					"ReserveForWorstApp=yes\n",
					"t.conf", &c, &err),
		0);
	assert_int_equal(c.preempt_budget, 0);
	assert_int_equal(c.preempt_every_s, 0);
	assert_true(c.preempt_unsaved);
	assert_true(c.reserve_worst_app);
	assert_int_equal(agora_conf_ckpt(&c, "gpu", "long"), 7200);
	assert_int_equal(agora_conf_ckpt(&c, "gpu", "normal"), 3600);
	assert_int_equal(agora_conf_ckpt(&c, "cpu", NULL), 1800);
	assert_int_equal(agora_conf_ckpt(&c, NULL, "long"), 7200);
	assert_int_equal(
		agora_conf_parse_string("CheckpointInterval=qos:long:2h\n",
					"t.conf", &c, &err),
		0);
	assert_int_equal(agora_conf_ckpt(&c, "gpu", "normal"), 0);
	agora_conf_free(&c);
}

static void test_conf_bad_input_names_file_line_key(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		agora_conf_t c;
		agora_err_t err = { { 0 } };

		agora_conf_defaults(&c);
		c.lease_s = 1234; /* marks "previous config" */
		errno = 0;
		assert_int_equal(agora_conf_parse_string(bad_cases[i].text,
							 "bad.conf", &c, &err),
				 -1);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err.text, bad_cases[i].expect))
			fail_msg("case %zu: got '%s', want '%s'", i, err.text,
				 bad_cases[i].expect);
		assert_int_equal(c.lease_s, 1234);
		agora_conf_free(&c);
	}
}

static void test_conf_file_missing_and_real(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };
	char path[64];
	int fd;
	FILE *f;

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(
		agora_conf_parse_file("/nonexistent/agora.conf", &c, &err), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(
		strstr(err.text,
		       "/nonexistent/agora.conf: No such file or directory"));

	/* mkstemp template: a prefix and six X */
	snprintf(path, sizeof(path), "%s", "/tmp/agora-conf-test-");
	memset(path + strlen(path), 'X', 6);
	path[strlen("/tmp/agora-conf-test-") + 6] = '\0';
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("LeaseTime=2h\nGraceTime=oops\n", f);
	fclose(f);
	assert_int_equal(agora_conf_parse_file(path, &c, &err), -1);
	assert_non_null(strstr(err.text, ":2: GraceTime:"));
	assert_non_null(strstr(err.text, path));

	f = fopen(path, "w");
	fputs("LeaseTime=2h\n", f);
	fclose(f);
	assert_int_equal(agora_conf_parse_file(path, &c, &err), 0);
	assert_int_equal(c.lease_s, 7200);
	/* issue 19: a file others can write is refused, naming the file */
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(agora_conf_parse_file(path, &c, &err), -1);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(err.text, "writable by others (mode 0666)"));
	assert_non_null(strstr(err.text, path));
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(agora_conf_parse_file(path, &c, &err), 0);
	unlink(path);
	agora_conf_free(&c);
}

/* The federation keys: values, defaults, and file:line: key errors. */
static void test_conf_fed_keys(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	(void) state;
	agora_conf_defaults(&c);
	assert_false(c.fed_auction);
	assert_int_equal(c.fed_auction_timeout_s, 60);
	assert_int_equal(c.fed_pin_start_timeout_s, 300);
	assert_int_equal(c.fed_interval_s, 2);
	assert_int_equal(c.fed_survey_max_age_s, 5);
	assert_int_equal(
		agora_conf_parse_string("FedAuction=yes\nFedAuctionTimeout=2m\n"
					"FedAuctionInterval=3\n"
					"FedSurveyMaxAge=0\n"
					"FedCatalog=/etc/slurm/datasets.json\n",
					"t.conf", &c, &err),
		0);
	assert_true(c.fed_auction);
	assert_int_equal(c.fed_auction_timeout_s, 120);
	assert_int_equal(c.fed_interval_s, 3);
	assert_int_equal(c.fed_survey_max_age_s, 0);
	assert_int_equal(agora_conf_parse_string("FedSurveyMaxAge=2m\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:1: FedSurveyMaxAge:"));
	assert_string_equal(c.fed_catalog, "/etc/slurm/datasets.json");
	assert_int_equal(agora_conf_parse_string("\nFedAuctionTimeout=1s\n",
						 "t.conf", &c, &err),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "t.conf:2: FedAuctionTimeout:"));
	assert_int_equal(agora_conf_parse_string("FedAuction=maybe\n", "t.conf",
						 &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:1: FedAuction: 'maybe'"));
	/* a failed parse keeps the previous configuration */
	assert_true(c.fed_auction);
	assert_int_equal(c.fed_auction_timeout_s, 120);
	agora_conf_free(&c);
}

/* The loaning keys: values, defaults, the demand source, and the checks
 * across keys (both partition lists, no partition in both). */
static void test_conf_loan_keys(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	(void) state;
	agora_conf_defaults(&c);
	assert_false(c.loaning);
	assert_int_equal(c.loan_headroom, 1);
	assert_int_equal(c.reclaim_deadline_s, 300);
	assert_int_equal(c.loan_demand_kind, AGORA_DEMAND_JOBS);
	assert_int_equal(
		agora_conf_parse_string(
			"Loaning=yes\nLoanInferencePartitions=infer,serve\n"
			"LoanTrainPartitions=train\nLoanHeadroomNodes=2\n"
			"LoanInterval=5\nLoanLendHold=1m\nReclaimDeadline=90\n"
			"LoanCheckpointInterval=10m\nLoanRestartOverhead=30\n"
			"LoanDemandSource=file:/run/demand\n",
			"t.conf", &c, &err),
		0);
	assert_true(c.loaning);
	assert_int_equal(c.n_loan_infer_partitions, 2);
	assert_string_equal(c.loan_infer_partitions[1], "serve");
	assert_true(agora_conf_loan_partition(&c, "train", false));
	assert_false(agora_conf_loan_partition(&c, "train", true));
	assert_int_equal(c.loan_headroom, 2);
	assert_int_equal(c.loan_lend_hold_s, 60);
	assert_int_equal(c.reclaim_deadline_s, 90);
	assert_int_equal(c.loan_ckpt_s, 600);
	/* LoanCheckpointWait unset: half the interval; no reclaim ahead */
	assert_int_equal(c.loan_ckpt_wait_s, 300);
	assert_int_equal(c.loan_ahead_s, 0);
	assert_int_equal(c.loan_demand_kind, AGORA_DEMAND_FILE);
	assert_string_equal(c.loan_demand_arg, "/run/demand");
	assert_int_equal(agora_conf_parse_string(
				 "LoanDemandSource=command:/bin/echo 3\n",
				 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.loan_demand_kind, AGORA_DEMAND_COMMAND);
	assert_string_equal(c.loan_demand_arg, "/bin/echo 3");
	/* a reclaim ahead goes through the checkpoint wait */
	assert_int_equal(agora_conf_parse_string("LoanReclaimAhead=15m\n"
						 "LoanReclaimAheadSigma=2\n",
						 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.loan_ckpt_wait_s, 900);
	assert_int_equal(c.loan_ahead_s, 900);
	assert_true(c.loan_ahead_z == 2);
	assert_int_equal(agora_conf_parse_string("LoanCheckpointWait=0\n"
						 "LoanReclaimAhead=15m\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:2: LoanReclaimAhead: needs"));
	assert_int_equal(agora_conf_parse_string("LoanCheckpointInterval=0\n"
						 "LoanReclaimAhead=1m\n",
						 "t.conf", &c, &err),
			 -1);
	assert_int_equal(agora_conf_parse_string("LoanReclaimAheadSigma=11\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:1: LoanReclaimAheadSigma"));
	assert_int_equal(agora_conf_parse_string("\nLoanDemandSource=file:x\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:2: LoanDemandSource:"));
	assert_int_equal(agora_conf_parse_string("LoanDemandSource=web\n",
						 "t.conf", &c, &err),
			 -1);
	assert_int_equal(agora_conf_parse_string(
				 "# x\nLoaning=yes\nLoanTrainPartitions=t\n",
				 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:2: Loaning:"));
	assert_int_equal(
		agora_conf_parse_string("Loaning=yes\nLoanTrainPartitions=a,b\n"
					"LoanInferencePartitions=b\n",
					"t.conf", &c, &err),
		-1);
	assert_non_null(strstr(err.text, "LoanTrainPartitions: 'b'"));
	assert_int_equal(agora_conf_parse_string("ReclaimDeadline=1\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:1: ReclaimDeadline:"));
	/* a reclaim's grace: 60 s by default, at most half the deadline
	 * when unset, below the deadline when set; no requeue limit by
	 * default */
	assert_int_equal(agora_conf_parse_string("ReclaimDeadline=300\n",
						 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.reclaim_grace_s, 60);
	assert_int_equal(c.max_requeues, 0);
	assert_int_equal(agora_conf_parse_string("ReclaimDeadline=30\n"
						 "MaxRequeuesPerJob=2\n",
						 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.reclaim_grace_s, 15);
	assert_int_equal(c.max_requeues, 2);
	assert_int_equal(agora_conf_parse_string(
				 "Loaning=yes\nLoanInferencePartitions=i\n"
				 "LoanTrainPartitions=t\nReclaimDeadline=30\n"
				 "ReclaimGrace=25\n",
				 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.reclaim_grace_s, 25);
	assert_int_equal(agora_conf_parse_string(
				 "Loaning=yes\nLoanInferencePartitions=i\n"
				 "LoanTrainPartitions=t\nReclaimDeadline=30\n"
				 "ReclaimGrace=30\n",
				 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(
		err.text,
		"t.conf:5: ReclaimGrace: 30 s is not less than ReclaimDeadline (30 s)"));
	assert_int_equal(agora_conf_parse_string("MaxRequeuesPerJob=-1\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:1: MaxRequeuesPerJob"));
	/* the loan lease: 10 minutes by default, 0 disables it, never
	 * shorter than three loan rounds */
	assert_int_equal(c.loan_lease_timeout_s, 600);
	assert_int_equal(agora_conf_parse_string(
				 "Loaning=yes\nLoanInferencePartitions=i\n"
				 "LoanTrainPartitions=t\nLoanInterval=10\n"
				 "LoanLeaseTimeout=20\n",
				 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:5: LoanLeaseTimeout: 20 s"));
	assert_int_equal(
		agora_conf_parse_string(
			"Loaning=yes\nLoanInferencePartitions=i\n"
			"LoanTrainPartitions=t\nLoanInterval=10\n"
			"LoanLeaseTimeout=0\nLoanDemandSource=command:/bin/x\n",
			"t.conf", &c, &err),
		0);
	assert_int_equal(c.loan_lease_timeout_s, 0);
	/* run without a shell: a relative program or a broken quote is
	 * refused at parse time, naming the line and the key */
	{
		agora_conf_t d;

		agora_conf_defaults(&d);
		assert_int_equal(agora_conf_parse_string(
					 "LoanDemandSource=command:demand 3\n",
					 "t.conf", &d, &err),
				 -1);
		assert_non_null(
			strstr(err.text, "t.conf:1: LoanDemandSource:"));
		assert_non_null(strstr(err.text, "absolute path"));
		assert_int_equal(
			agora_conf_parse_string(
				"LoanDemandSource=command:/bin/echo 'x\n",
				"t.conf", &d, &err),
			-1);
		assert_non_null(strstr(err.text, "unterminated"));
		agora_conf_free(&d);
	}
	/* a pending job's partition list counts by any of its names */
	assert_true(agora_conf_loan_partition(&c, "x,t", false));
	assert_true(agora_conf_loan_partition(&c, "t,x", false));
	assert_false(agora_conf_loan_partition(&c, "tt,x", false));
	assert_false(agora_conf_loan_partition(&c, "x,t", true));
	/* a failed parse keeps the previous configuration */
	assert_int_equal(c.loan_demand_kind, AGORA_DEMAND_COMMAND);
	/* elastic growth: on by default, its keys checked */
	agora_conf_free(&c);
	agora_conf_defaults(&c);
	assert_true(c.loan_grow);
	assert_int_equal(c.loan_grow_min_gain_s, 600);
	assert_true(fabs(c.loan_serial - 0.05) < 1e-12);
	assert_int_equal(agora_conf_parse_string(
				 "LoanElasticGrow=no\nLoanGrowMinGain=1h\n"
				 "LoanScalingSerial=0.1\n",
				 "t.conf", &c, &err),
			 0);
	assert_false(c.loan_grow);
	assert_int_equal(c.loan_grow_min_gain_s, 3600);
	assert_true(fabs(c.loan_serial - 0.1) < 1e-12);
	assert_int_equal(agora_conf_parse_string("\nLoanScalingSerial=1.5\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:2: LoanScalingSerial:"));
	agora_conf_free(&c);
}

/* agorad's /metrics port: off by default, a TCP port number */
static void test_conf_metrics_port(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(c.metrics_port, 0);
	assert_int_equal(agora_conf_parse_string("MetricsPort=49123\n",
						 "t.conf", &c, &err),
			 0);
	assert_int_equal(c.metrics_port, 49123);
	assert_int_equal(agora_conf_parse_string("\nMetricsPort=65536\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "t.conf:2: MetricsPort"));
	assert_int_equal(agora_conf_parse_string("MetricsPort=http\n", "t.conf",
						 &c, &err),
			 -1);
	agora_conf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_defaults_when_empty),
		cmocka_unit_test(test_conf_all_keys_parse),
		cmocka_unit_test(test_conf_fed_keys),
		cmocka_unit_test(test_conf_loan_keys),
		cmocka_unit_test(test_conf_metrics_port),
		cmocka_unit_test(test_conf_ckpt_keys),
		cmocka_unit_test(test_conf_bad_input_names_file_line_key),
		cmocka_unit_test(test_conf_file_missing_and_real),
		cmocka_unit_test(test_conf_app_name),
	};

	return cmocka_run_group_tests_name("agora_conf", tests, NULL, NULL);
}
