// The limits of a v1 challenge's salt (PROTOCOL.md section 2), one definition for issue
// (challenge.ts) and verification (verify.ts): a challenge issued within them always verifies, and
// verification refuses anything longer than issue can write. Imports nothing, so the error
// catalogue can name the limit too.

/** The longest salt issued and accepted. */
export const V1_SALT_MAX_LENGTH = 1024;
/** Custom parameters per challenge (params.<name>, v1 and v2). */
export const MAX_PARAMS = 10;
/** Characters of a parameter's name. */
export const PARAM_NAME_MAX = 20;
/** Characters of a parameter's value (printable ASCII); percent-encoded in the salt, up to 3 each. */
export const PARAM_VALUE_MAX = 100;
/** Characters of the key id in the salt. */
export const SALT_KEY_ID_MAX = 64;

/**
 * The exact salt createChallengeV1 writes. Anchored at both ends and ending in `&`: the CVE-2025-68113
 * splice (moving digits of `number` into the salt to extend `expires`) cannot produce a salt of this form.
 */
export const V1_SALT = new RegExp(
  `^[0-9a-f]{24}\\?expires=([1-9][0-9]{0,10})&apiKey=([A-Za-z0-9_]{1,${SALT_KEY_ID_MAX}})&` +
  `((?:params\\.[A-Za-z0-9_-]{1,${PARAM_NAME_MAX}}=[A-Za-z0-9_.!~*'()%-]{0,${3 * PARAM_VALUE_MAX}}&){0,${MAX_PARAMS}})$`,
);
