/*
 * agora_slurm_conf.h - reading agora.conf from a Slurm plugin: the file
 * beside slurm.conf (get_extra_conf_path), parsed by the core
 * (agora_conf.c).  One loader for every plugin that reads it.
 */
#ifndef AGORA_SLURM_CONF_H
#define AGORA_SLURM_CONF_H

#include "agora_conf.h"

/*
 * Parse agora.conf into *c (the defaults first).  Returns 0 when the file
 * was read, 1 when it does not exist (*c: the defaults), -1 when it was
 * rejected (*c: the defaults; err: "FILE:LINE: KEY: why").  *path (may be
 * NULL) gets the file's path (xmalloc'ed; the caller xfree()s it).
 */
extern int agora_slurm_conf_load(agora_conf_t *c, char **path,
				 agora_err_t *err);

#endif
