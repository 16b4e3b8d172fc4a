/*
 * The `factorKeys` option, stated here beside the factors (src/options.ts composes it into the
 * option schema; docs/configuration.md's option reference is generated from it).
 */
import { z } from 'zod';

/** The `factorKeys` option: the keys that seal the users' factor secrets (newest first). */
export const factorKeysOptionSchema = z
  .array(z.string().min(32, 'factor keys need at least 32 characters'))
  .min(1)
  .optional()
  .meta({
    description: "keys sealing what could sign a user in (an authenticator app's secret) and keying the recovery codes' "
      + 'hashes, newest first: the first seals, every key opens, so keys rotate by putting a new one first and dropping the '
      + 'oldest once every user has signed in or re-enrolled; every instance needs the same. Absent: derived from '
      + '`cookieKeys` (a distinct derivation, never the cookie key itself), with a warning, so that dropping a cookie key '
      + 'also loses the authenticator apps sealed under it ([second factors](operations.md#second-factors))',
    absent: 'from cookieKeys',
  });
