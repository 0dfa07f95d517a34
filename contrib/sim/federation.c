/*
 * federation.c - agora-sim federation: a trace on several clusters under
 * federation dispatchers (doc/federation.md, "Simulated federation").
 */
#include <stdio.h>

#include "sim_cli.h"

int federation_main(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "agora-sim federation: not implemented yet\n");
	return 2;
}
