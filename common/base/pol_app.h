/*
 * pol_app.h - one app identity for the whole of Agora.
 *
 * An app (a Slurm account, a user, or a job-name prefix: AppDefinition)
 * is known to the credit ledger, the auction policy, the adapters and
 * the site factor by one key: a string of 1..POL_APP_KEY_LEN-1 bytes.
 * Every layer derives it from the app's name with pol_app_key(), so the
 * ledger's entry for an app and the auction's view of it always match.
 *
 *   1..63 bytes     the name itself
 *   empty or NULL   POL_APP_NONE, "(none)"
 *   64+ bytes       the first 46 bytes (cut back to a UTF-8 character
 *                   boundary) + '~' + 16 lower-case hex digits of the
 *                   64-bit FNV-1a hash of the whole name: two long names
 *                   that share a prefix get different keys
 *
 * A key is its own key (pol_app_key(key) == key), so a name read back
 * from the ledger (pol_credit_account()) can be handed to any function
 * that takes an app name.  The price of that: a real app literally named
 * "(none)", or named exactly like the key of a long name (a 63-byte
 * string ending in that name's hash), shares that ledger entry.  Two
 * different long names share a key only on a 64-bit hash collision.
 *
 * Pure: no allocation, no global state.
 */
#ifndef POL_APP_H
#define POL_APP_H

/* Size of a key buffer, NUL included (= POL_CREDIT_NAME_LEN). */
#define POL_APP_KEY_LEN 64
/* The key of an app without a name. */
#define POL_APP_NONE "(none)"
/* Bytes of a long name kept in front of its hash (at most). */
#define POL_APP_PREFIX_LEN 46

/*
 * Write the key of name (NULL allowed) into out (POL_APP_KEY_LEN bytes,
 * always NUL-terminated).  Returns 0 if the name is used as is, 1 if a
 * fallback key was derived (empty/NULL or too long).  Never fails.
 */
int pol_app_key(const char *name, char out[POL_APP_KEY_LEN]);

/* The 64-bit FNV-1a hash of the NUL-terminated string s. */
unsigned long long pol_app_hash(const char *s);

#endif
