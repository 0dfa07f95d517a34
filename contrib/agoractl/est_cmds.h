/*
 * est_cmds.h - agoractl's run-time history command (est_cmds.c):
 * estimates seed.
 */
#ifndef AGORACTL_EST_CMDS_H
#define AGORACTL_EST_CMDS_H

#include <stdbool.h>

/* True if cmd is "estimates". */
bool agoractl_est_command(const char *cmd);
/* Run it: argv[0] is the command.  Returns the exit status. */
int agoractl_est_main(int argc, char **argv);

#endif
