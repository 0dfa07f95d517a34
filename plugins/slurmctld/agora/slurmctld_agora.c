/*
 * slurmctld/agora - shows what Agora decided in "scontrol show config"
 * (section "Slurmctld Plugstack Plugins Configuration") and agoractl, which
 * reads the same RPC.  Enabled with SlurmctldPlugstack=slurmctld/agora;
 * Slurm 22.05 only (23.02 removed SlurmctldPlugstack; the select/cons_tres
 * wrapper carries the same pairs on 24.11).  The pairs, their cache and
 * PrivateData: plugins/common/agora_view_pairs.h.
 */
#include "config.h"
#include "agora_compat.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xstring.h"

#include "agora_view_pairs.h"
#include "slurmctld_agora.h"

const char plugin_name[] = "Agora decisions in scontrol show config";
const char plugin_type[] = "slurmctld/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init(void)
{
	debug("%s: loaded", plugin_type);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	agora_view_pairs_fini();
	return SLURM_SUCCESS;
}

extern void slurmctld_plugstack_p_get_config(config_plugin_params_t *p)
{
	xstrcat(p->name, plugin_type);
	agora_view_pairs_append(plugin_type, p->key_pairs);
}
