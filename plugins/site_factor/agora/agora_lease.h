/*
 * agora_lease.h - the loan lease inside slurmctld (agora_lease.c): a loan
 * whose heartbeat agorad has not renewed within LoanLeaseTimeout goes
 * back to inference.
 */
#ifndef AGORA_LEASE_H
#define AGORA_LEASE_H

#include <time.h>

/* Once per pass, from Agora's thread, no slurmctld lock held. */
extern void agora_lease_pass(time_t now);

#endif
