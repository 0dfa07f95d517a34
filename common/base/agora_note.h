/*
 * agora_note.h - the SystemComment Agora keeps on a job, made of two
 * parts written by two passes of site_factor/agora:
 *   the federation's text (agorad's decision or hold mark, mirrored from
 *     the AdminComment: "Agora: fed auction: won by c2 ...")
 *   the within-cluster auction's note ("Agora: won GPUs in the auction:
 *     ranks first (app a)", "Agora: lease of 8 GPUs until ...").
 * A federated job shows both, federation first:
 *     <federation text> || <auction note>
 * Each pass replaces its own part and keeps the other.  The whole fits in
 * AGORA_NOTE_MAX bytes (Slurm's limit on a job's comment, job_mgr.c
 * _test_strlen "comment" 1024): the auction note is kept whole (it is
 * short, and it is what changes), the federation text is cut and ends in
 * "..." (its bids are the long part; agoractl explain reads the whole
 * decision from the AdminComment).
 *
 * A SystemComment that does not start with "Agora: " was written by
 * another component and is never touched.
 */
#ifndef AGORA_NOTE_H
#define AGORA_NOTE_H

#include <stddef.h>

#define AGORA_NOTE_MAX 1024
#define AGORA_NOTE_SEP " || "

typedef enum {
	AGORA_NOTE_FED,     /* the federation's text: "Agora: fed ..." */
	AGORA_NOTE_AUCTION, /* the within-cluster auction's note */
} agora_note_part_t;

/*
 * The SystemComment after replacing part with text (NULL or "": remove
 * that part) in cur (NULL: none).  Returns 1 and *out (malloc'ed, NULL
 * when nothing is left) if it changes, 0 if cur stays as it is, -1 if cur
 * is not Agora's (left alone) or text is not Agora's (no "Agora: "
 * prefix) or on ENOMEM; *out is NULL then.
 */
int agora_note_update(const char *cur, agora_note_part_t part, const char *text,
		      char **out);

/*
 * Split an Agora SystemComment into its parts: *fed, *fed_len and
 * *auc, *auc_len point into s (length 0: absent).  Returns -1 if s is not
 * Agora's.
 */
int agora_note_split(const char *s, const char **fed, size_t *fed_len,
		     const char **auc, size_t *auc_len);

#endif
