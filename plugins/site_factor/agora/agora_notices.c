/*
 * agora_notices.c - what site_factor/agora says at start-up about Slurm
 * settings beside it that it overrides (issue 19, lows): said in the log
 * once, never a silent override.
 *
 *   PrioritySiteFactorParameters: Slurm hands it to the site factor
 *     plugin; Agora takes its settings from agora.conf and reads none.
 *   SiteFactor= (scontrol update job): every pending job's site factor is
 *     set again each PriorityCalcPeriod, so an admin's value would be
 *     undone within seconds; job_submit/agora refuses the update (with an
 *     error naming why), and without it the value is overwritten.
 */
#include "config.h"
#include "agora_compat.h"

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xstring.h"

#include "agora_sched.h"

extern void agora_site_factor_notices(void)
{
	const char *jsp = slurm_conf.job_submit_plugins;

	if (slurm_conf.site_factor_params && *slurm_conf.site_factor_params)
		info("site_factor/agora: PrioritySiteFactorParameters=%s is ignored: Agora's settings are in agora.conf",
		     slurm_conf.site_factor_params);
	if (jsp && xstrstr(jsp, "agora"))
		info("site_factor/agora: scontrol update job SiteFactor= is refused (job_submit/agora): the site factor is Agora's credit and auction boost; use Nice=, Priority= or a QOS priority");
	else
		info("site_factor/agora: scontrol update job SiteFactor= is overwritten at the next PriorityCalcPeriod (the site factor is Agora's credit and auction boost); JobSubmitPlugins=agora refuses it instead");
}
