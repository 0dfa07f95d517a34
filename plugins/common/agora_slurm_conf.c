/*
 * agora_slurm_conf.c - see agora_slurm_conf.h.
 */
#include "config.h"

#include <errno.h>

#include "slurm/slurm.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"

#include "agora_slurm_conf.h"
#include "agora_ctld_weak.h"

extern int agora_slurm_conf_load(agora_conf_t *c, char **path, agora_err_t *err)
{
	char name[] = "agora.conf";
	char *p = get_extra_conf_path(name);
	int rc = 0;

	agora_conf_defaults(c);
	if (agora_conf_parse_file(p, c, err)) {
		rc = (errno == ENOENT) ? 1 : -1;
		agora_conf_free(c);
		agora_conf_defaults(c);
	}
	if (path)
		*path = p;
	else
		xfree(p);
	return rc;
}
