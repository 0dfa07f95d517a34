/*
 * agora_fed.h - the federation's side of site_factor/agora (agora_fed.c):
 * fail-open release of Agora's federation holds, the auction's decision in
 * the SystemComment, and the federation-wide usage of the credit term.
 */
#ifndef AGORA_FED_H
#define AGORA_FED_H

#include <time.h>

/* Once per pass, no slurmctld lock and no Agora lock held. */
extern void agora_fed_pass(time_t now);

/* GPU-hours (decayed) the app used on the other clusters of the
 * federation, as agorad last reported; 0 if unknown.  Any lock order:
 * takes only its own leaf lock. */
extern double agora_fed_remote_usage(const char *app);

/* For job_submit/agora (dlsym): "app:GPU-hours,..." from agorad. */
extern void agora_export_fed_usage(const char *text, time_t now);

extern void agora_fed_fini(void);

#endif
