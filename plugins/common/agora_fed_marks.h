/*
 * agora_fed_marks.h - the texts by which Agora's federation pieces
 * recognise each other's work on a job, through fields Slurm keeps and
 * shows: the AdminComment (only SlurmUser, root and admins may set it, so
 * a user cannot forge a mark) and the SystemComment.
 *
 * The life of a federated GPU job under FedAuction=yes:
 *   1. job_submit/agora (origin): priority 0 (held: fed_mgr sends no
 *      sibling copy) and AdminComment "Agora: fed hold v1: waiting since
 *      T ..." (pol_fed_mark_waiting)
 *   2. agorad: will-run on every cluster (requests carry AdminComment
 *      AGORA_FED_PLAN, which also tells job_submit/agora that agorad is
 *      alive), the auction, then Clusters=<winner> with AdminComment
 *      "Agora: fed hold v1: pinned to C ..." (the hold mark stays), then
 *      the release (priority INFINITE) with the decision AGORA_FED_WON...
 *      in the same update (the steps and their crash orders:
 *      common/fed/pol_fed_hold.h)
 *   3. site_factor/agora (every cluster): copies an Agora federation text
 *      into the SystemComment; on the origin releases a held job whose
 *      Agora hold began FedAuctionTimeout ago (AdminComment
 *      AGORA_FED_OPEN...): fail open (pol_fed_hold_expired).
 *   4. job_submit/agora's job_modify: "scontrol hold" on such a job marks
 *      it "held by its owner or an admin", which nothing of Agora undoes.
 * Plain C: included by the plugins and by agorad.
 */
#ifndef AGORA_FED_MARKS_H
#define AGORA_FED_MARKS_H

#include "pol_fed_hold.h"

/* The prefix of every federation hold mark, of any version (the marks
 * themselves: pol_fed_hold.h). */
#define AGORA_FED_HOLD "Agora: fed hold"
/* AdminComment (and SystemComment) of a job agorad placed: winner, bids. */
#define AGORA_FED_WON POL_FED_TEXT_WON
/* AdminComment of a hold released because no decision came in time. */
#define AGORA_FED_OPEN POL_FED_TEXT_OPEN
/* AdminComment of agorad's will-run requests; "Agora: fed plan; usage="
 * carries the federation's usage per app (app:GPU-hours,...). */
#define AGORA_FED_PLAN  "Agora: fed plan"
#define AGORA_FED_USAGE "; usage="

#endif
