/*
 * agora_notices.c - what site_factor/agora says at start-up about Slurm
 * settings beside it that it overrides (issue 19, lows): said in the log
 * once, never a silent override.
 *
 *   PrioritySiteFactorParameters: Slurm hands it to the site factor
 *     plugin; Agora takes its settings from agora.conf and reads none.
 *   SiteFactor= (scontrol update job): kept for that job
 *     (agora_admin_sf.c), which then leaves Agora's credit order and
 *     auction boost.
 */
#include "config.h"
#include "agora_compat.h"

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/read_config.h"

#include "agora_sched.h"

extern void agora_site_factor_notices(void)
{
	if (slurm_conf.site_factor_params && *slurm_conf.site_factor_params)
		info("site_factor/agora: PrioritySiteFactorParameters=%s is ignored: Agora's settings are in agora.conf",
		     slurm_conf.site_factor_params);
}
