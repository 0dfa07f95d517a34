/*
 * fed_cmds.h - agoractl's federation commands (fed_cmds.c): fed, explain,
 * datasets, place.
 */
#ifndef AGORACTL_FED_CMDS_H
#define AGORACTL_FED_CMDS_H

#include <stdbool.h>

/* True if cmd is one of the federation commands. */
bool agoractl_fed_command(const char *cmd);
/* Run it: argv[0] is the command.  Returns the exit status. */
int agoractl_fed_main(int argc, char **argv);

#endif
