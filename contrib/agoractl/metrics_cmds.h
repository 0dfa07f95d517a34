/*
 * metrics_cmds.h - agoractl metrics: Prometheus' text format.
 */
#ifndef METRICS_CMDS_H
#define METRICS_CMDS_H

#include "agora_view.h"

/* argv[0] is "metrics"; v: the view slurmctld publishes (NULL if it
 * could not be read).  Returns the exit status. */
int agoractl_metrics_main(int argc, char **argv, const agora_view_t *v);

#endif
