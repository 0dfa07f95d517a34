/*
 * loan_cmds.h - agoractl's loaning commands (loan_cmds.c): loans,
 * loan-curve.
 */
#ifndef AGORACTL_LOAN_CMDS_H
#define AGORACTL_LOAN_CMDS_H

#include <stdbool.h>

/* True if cmd is one of the loaning commands. */
bool agoractl_loan_command(const char *cmd);
/* Run it: argv[0] is the command.  Returns the exit status. */
int agoractl_loan_main(int argc, char **argv);

#endif
