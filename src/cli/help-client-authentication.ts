/* Help texts of the client-authentication, DPoP and PAR flags (src/cli/client-authentication.ts). */

/** The flags of `clients create|update` and `apps create|update` (confidential apps) for how the client authenticates. */
export const AUTHENTICATION_OPTIONS = `Client authentication and DPoP:
  --auth-method <method>    client_secret_basic (the default: a secret, printed once) or
                            private_key_jwt (RFC 7523: the client signs an assertion with its own
                            private key; no secret at all). Confidential apps only
  --jwks-file <file>        private_key_jwt: a JSON file of the client's PUBLIC keys,
                            {"keys": [...]} (at most 10, 32 KiB; RSA >= 2048 bits, EC P-256,
                            Ed25519; a kid on each when there are several). A private member
                            (d, p, q, ...) is refused: never give the client's private key file
  --jwks-uri <url>          private_key_jwt: where the server fetches the client's public keys
                            instead (https; plain http only to a loopback host). Not with --jwks-file
  --dpop <rule>             required (every token request must carry a DPoP proof: tokens bound to
                            the client's key) or optional (the default: bound when a proof is sent)`;

/** The PAR flags of `apps create|update`. */
export const PAR_OPTIONS = `  --require-par             the app must push its authorization requests (RFC 9126, POST
                            /oauth2/par); a plain authorization request of it is refused
  --no-require-par          (update) plain authorization requests are taken again`;

/** How a private_key_jwt client changes its keys without a failed token request. */
export const CLIENT_KEY_ROTATION = `Rotating a private_key_jwt client's keys without downtime (the keys are replaced whole):
  1. update <clientId> --jwks-file old-and-new.json   both keys verify
  2. the client starts signing its assertions with the new key
  3. update <clientId> --jwks-file new.json           the old key no longer verifies
With --jwks-uri, publish both keys at the URL, then the new one alone (the server refetches it).

Switching methods: --auth-method private_key_jwt with --jwks-file or --jwks-uri deletes the secret
at once; --auth-method client_secret_basic drops the keys and prints a new secret, once. Both are
recorded in the audit trail with the method before and after (never a key or a secret).`;
