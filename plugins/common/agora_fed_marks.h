/*
 * agora_fed_marks.h - the texts by which Agora's federation pieces
 * recognise each other's work on a job, through fields Slurm keeps and
 * shows: the AdminComment (only SlurmUser, root and admins may set it, so
 * a user cannot forge a mark) and the SystemComment.
 *
 * The life of a federated GPU job under FedAuction=yes:
 *   1. job_submit/agora (origin): priority 0 (held: fed_mgr sends no
 *      sibling copy) and AdminComment AGORA_FED_HOLD...
 *   2. agorad: will-run on every cluster (requests carry AdminComment
 *      AGORA_FED_PLAN, which also tells job_submit/agora that agorad is
 *      alive), the auction, then Clusters=<winner> with AdminComment
 *      AGORA_FED_WON..., then release (priority INFINITE).
 *   3. site_factor/agora (every cluster): copies an AGORA_FED_WON text
 *      into the SystemComment; on the origin releases a hold older than
 *      FedAuctionTimeout (AdminComment AGORA_FED_OPEN...): fail open.
 * Plain C: included by the plugins and by agorad.
 */
#ifndef AGORA_FED_MARKS_H
#define AGORA_FED_MARKS_H

/* AdminComment of a job held for the auction. */
#define AGORA_FED_HOLD "Agora: fed hold: "
/* AdminComment (and SystemComment) of a job agorad placed: winner, bids. */
#define AGORA_FED_WON "Agora: fed auction: "
/* AdminComment of a hold released because no decision came in time. */
#define AGORA_FED_OPEN "Agora: fed hold released: "
/* AdminComment of agorad's will-run requests; "Agora: fed plan; usage="
 * carries the federation's usage per app (app:GPU-hours,...). */
#define AGORA_FED_PLAN  "Agora: fed plan"
#define AGORA_FED_USAGE "; usage="

#endif
