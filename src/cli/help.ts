/* Help texts: `talent-auth --help`, `talent-auth <group> --help`, `talent-auth <group> <command> --help`. */
import { CONNECTIONS_COMMAND_HELP, CONNECTIONS_GROUP_HELP } from './help-connections.js';
import { AUTHENTICATION_OPTIONS, CLIENT_KEY_ROTATION, PAR_OPTIONS } from './help-client-authentication.js';

const STORE_OPTIONS = `Store options (a flag wins over the --store-config file, which wins over the environment):
  --redis <url>          Redis URL (redis:// or rediss://); env REDIS_URL
  --store-config <file>  a JSON file holding the server's store option: url, cluster or sentinel,
                         username, password, tls, keyPrefix
  --key-prefix <prefix>  key prefix of the deployment (default: talent-auth:); env REDIS_KEY_PREFIX
  Environment, as the example server reads it: REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS
  (with REDIS_SENTINEL_NAME), REDIS_USERNAME, REDIS_PASSWORD, REDIS_TLS, REDIS_TLS_CA_FILE (docs/cli.md).
  The CLI needs one of a URL, cluster nodes or sentinels. It never prints a password.`;

const OUTPUT_OPTIONS = `Output:
  --json                 machine-readable JSON on stdout (snake_case names); errors as JSON on stderr
  -h, --help             this help`;

const EXIT_CODES = `Exit codes: 0 success, 1 usage or validation error (stderr names the field), 2 Redis unreachable.`;

const FILE_OPTION = `  --file <file>   the private JWKS file the servers read (JWKS_FILE / keys.jwks); rewritten
                  atomically with mode 0600. Needs no Redis.`;

const ROTATION = `Which key signs: the FIRST key of each algorithm in the file signs tokens of that algorithm;
every later key of the same algorithm is only published at /oauth2/jwks (it verifies, it signs
nothing). A server reads the file at startup: each step takes effect on an instance when it
restarts with the new file.

Key rotation, without a token ever failing to verify:
  1. keys add --alg ES256          the new key is published, the old one still signs. Restart every
                                   instance; after the last restart wait at least the longest JWKS
                                   cache of any verifier (resource-server kit: 600 s by default).
  2. keys promote --kid <new>      the new key signs, the old one stays published. Restart every
                                   instance; after the last restart wait at least the longest token
                                   lifetime (3600 s) plus clock skew: 65 minutes.
  3. keys retire --kid <old>       the old key is removed. Restart every instance.
Rotate the RS256 (ID token) key the same way, or both at once (--alg ES256 --alg RS256).`;

const STORED_KEYS_OPTION = `  --store         the key set kept in the store (servers started with keys: { store }), not a
                  file: every running server follows each step within seconds, no restart.
                  A step before its wait is refused, saying when it is safe; --force skips the
                  wait (a compromised key), never leaving an algorithm without a signing key.
                  Every step but list needs KEY_ENCRYPTION_KEYS (the servers' keys.store.keks,
                  comma-separated, in their order): the set is authenticated with them and add
                  seals the new key with them. Uses the store options (--redis ...).`;

const KEY_EXIT_CODES = 'Exit codes: 0 success, 1 usage error, unknown kid, refused step, or the file cannot be read or written.';

export const TOP_HELP = `talent-auth: operator CLI for a talent-auth deployment.

Works on the Redis store directly (the HTTP server need not run), with the server's own record
services: what it accepts and stores is exactly what createAuthServer() would.

Usage: talent-auth <group> <command> [options]

  clients create         create a client configuration (machine-to-machine); prints its secret once
  clients list           list the client configurations of a tenant
  clients update         change a client configuration (name, authentication method and keys, DPoP)
  clients rotate-secret  give a client configuration a new secret (the old one stops working)
  clients delete         delete a client configuration
  apps create            register an app (named-user sign-in); prints a secret once for confidential apps
  apps list              list the app registrations
  apps update            change an app (name, authentication method and keys, DPoP, PAR)
  apps rotate-secret     give a confidential app a new secret
  apps delete            delete an app registration
  keys generate          write a private JWKS file for JWKS_FILE / keys.jwks
  keys list              the keys of a JWKS file and which of them sign (never private parts)
  keys add               key rotation 1: add a key that is published but does not sign yet
  keys promote           key rotation 2: make a published key the signing key of its algorithm
  keys retire            key rotation 3: remove a key that no longer signs
  audit list             the audit trail of a tenant (or of the platform), newest first
  sign-ins unlock        let a user held by sign-in throttling sign in again at once
  factors list           a user's second factors (passkeys, authenticator app, recovery codes)
  factors reset          remove every second factor of a user (a lost phone)
  connections list       a tenant's identity providers (enterprise sign-in)
  connections create     connect a tenant's identity provider (the secret from stdin or env, never argv)
  connections update     change a connection
  connections delete     delete a connection
  export                 the configuration as a backup document (secrets as digests only)
  import                 restore a backup document: checked whole first, then only what differs

Run talent-auth <group> <command> --help for the options of a command.

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`;

export const GROUP_HELP: Record<string, string> = {
  connections: CONNECTIONS_GROUP_HELP,
  clients: `Usage: talent-auth clients <command> [options]

  create --tenant <t> --name <n> --category <c> --resource <api>:<scopes> [...]
         [--auth-method private_key_jwt (--jwks-file <f> | --jwks-uri <url>)] [--dpop required|optional]
  list --tenant <t>
  update <clientId> [--name <n>] [--category <c>] [--description <d>] [--auth-method <m>]
         [--jwks-file <f> | --jwks-uri <url>] [--dpop required|optional]
  rotate-secret <clientId>
  delete <clientId>

Run talent-auth clients <command> --help for details.
`,
  apps: `Usage: talent-auth apps <command> [options]

  create --name <n> --redirect-uri <uri> [...] --type public|confidential [--no-pkce] [--first-party] [--resource-server] [--tenant <id> [--all-tenants]]
         [--post-logout-redirect-uri <uri> ...] [--backchannel-logout-uri <uri>]
         [--auth-method private_key_jwt (--jwks-file <f> | --jwks-uri <url>)] [--dpop required|optional] [--require-par]
  list
  update <clientId> [--name <n>] [--description <d>] [--auth-method <m>] [--jwks-file <f> | --jwks-uri <url>]
         [--dpop required|optional] [--require-par | --no-require-par]
  rotate-secret <clientId>
  delete <clientId>

Run talent-auth apps <command> --help for details.
`,
  keys: `Usage: talent-auth keys <command> [options]

  generate [--alg <alg>]... --out <file> [--force]
  list --file <file>
  add --file <file> --alg <alg> [--alg ...]     rotation 1: publish the next key
  promote --file <file> --kid <kid>             rotation 2: switch signing to it
  retire --file <file> --kid <kid>              rotation 3: remove the old key

${ROTATION}

With --store in place of --file, the same steps change the key set kept in the store (servers
started with keys: { store }): every running server follows each step within seconds, no restart,
and a step before its wait is refused with the time it becomes safe (keys add --help).

Run talent-auth keys <command> --help for details.

With --redis (or REDIS_URL), add, promote and retire are recorded in the audit trail
(signing_key.added, .promoted, .retired); without it they say they were not recorded.
`,
  audit: `Usage: talent-auth audit <command> [options]

  list (--tenant <id> | --platform) [--type <type>] [--since <time>] [--until <time>] [--limit <n>] [--cursor <c>]

Run talent-auth audit list --help for details.
${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'sign-ins': `Usage: talent-auth sign-ins <command> [options]

  unlock --username <username> [--tenant <id>] [--actor <name>] [--cookie-key <key>]

Run talent-auth sign-ins unlock --help for details.
${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  factors: `Usage: talent-auth factors <command> [options]

  list --tenant <id> --sub <sub>
  reset --tenant <id> --sub <sub> [--actor <name>]

Run talent-auth factors <command> --help for details.
${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
};

/** The `--actor` flag of the commands that change a user's state. */
const ACTOR_OPTION = `  --actor <name>      who acts, recorded as the operator's name in the audit trail (e.g. your
                      login); 1 to 128 characters. Without it: the operator, unnamed`;

export const COMMAND_HELP: Record<string, string> = {
  ...CONNECTIONS_COMMAND_HELP,
  'factors list': `Usage: talent-auth factors list --tenant <id> --sub <sub>

Lists the second factors a user holds: her passkeys (with the names she gave them), her
authenticator app and her recovery codes, each with its id and when it was added; and whether a
reset asked for by her tenant's admin waits for her next sign-in. Never a secret, code, hash or
key. A factor the host keeps itself (accounts.secondFactor) is not listed. Needs no factor keys.

  --tenant <id>       the user's tenant
  --sub <sub>         the user's sub (as the AccountStore names her)

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'factors reset': `Usage: talent-auth factors reset --tenant <id> --sub <sub> [--actor <name>]

Removes every second factor of a user at once (a lost phone, a lost security key): passkeys,
authenticator app, recovery codes, an enrolment under way and a reset asked for. Her next sign-in
asks for the password alone; where her tenant requires a second factor she enrols one right after
it. Recorded in the audit trail before it is done (factor.reset, actor operator, with --actor as
its name, in the user's tenant, the user as target). A factor the host keeps itself
(accounts.secondFactor) is the host's to reset. Make sure first that it is her asking: whoever
has her password signs in with it alone afterwards.

  --tenant <id>       the user's tenant
  --sub <sub>         the user's sub (as the AccountStore names her)
${ACTOR_OPTION}

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'clients create': `Usage: talent-auth clients create --tenant <tenant> --name <name> --category <category>
         [--description <text>] --resource <api>:<scope>[,<scope>...] [--resource ...]
         [--constraint <api>:<dimension>=<value> ...] [--profile standard|high-security] --apis <file>
         [--auth-method client_secret_basic|private_key_jwt] [--jwks-file <file> | --jwks-uri <url>]
         [--dpop required|optional]

Creates a client configuration and prints its client_id and client_secret. The secret is shown
only this once (only its digest is stored). A private_key_jwt client gets no secret: it registers
its public keys, printed by key ID and RFC 7638 thumbprint.

  --tenant <tenant>         the tenant the client belongs to (fixed for its lifetime)
  --name <name>             display name
  --category <category>     e.g. payroll
  --description <text>      optional
  --resource <api>:<scopes> an API of the catalog with the scopes assigned, comma-separated;
                            repeat for several APIs
  --constraint <api>:<dimension>=<value>
                            a data filter; repeat for several values or dimensions, e.g.
                            --constraint scim:group=eng --constraint scim:group=ops
  --profile <profile>       standard (default) or high-security: private_key_jwt and DPoP
                            required (docs/high-security.md); a client that does not conform is
                            refused, naming the setting. Also checked when the tenant's settings
                            select the high-security profile
  --apis <file>             the API catalog: a JSON file holding the apis array given to
                            createAuthServer (or {"apis": [...]}); default: env TALENT_AUTH_APIS

Example:
  talent-auth clients create --tenant acme --name "Payroll sync" --category payroll \\
    --resource scim:scim.read,scim.write --resource subscriptions:manage.subscriptions \\
    --constraint scim:group=eng --constraint scim:department=rnd --apis apis.json
  talent-auth clients create --tenant acme --name "Payroll sync" --category payroll \\
    --resource scim:scim.read --auth-method private_key_jwt --jwks-file payroll-public.json \\
    --dpop required --apis apis.json

${AUTHENTICATION_OPTIONS}

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'clients list': `Usage: talent-auth clients list --tenant <tenant>

Lists the client configurations of a tenant, oldest first (never their secrets).

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'clients update': `Usage: talent-auth clients update <clientId> [--name <name>] [--category <category>]
         [--description <text>] [--auth-method client_secret_basic|private_key_jwt]
         [--jwks-file <file> | --jwks-uri <url>] [--dpop required|optional]
         [--profile standard|high-security] [--actor <name>]

Changes the fields given (at least one); the others stay. --description "" removes the
description. Prints the record (a new secret only when it switches to client_secret_basic, once).

  --name <name>             display name
  --category <category>     e.g. payroll
  --description <text>      "" removes it
  --profile <profile>       standard or high-security (docs/high-security.md); a change the
                            profile does not allow is refused, naming the setting
${ACTOR_OPTION}

${AUTHENTICATION_OPTIONS}

${CLIENT_KEY_ROTATION}

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'clients rotate-secret': `Usage: talent-auth clients rotate-secret <clientId>

Gives the client configuration a new secret and prints it once. The previous secret stops working
at once on every server instance. A private_key_jwt client has no secret (refused): it rotates its
keys with clients update (see talent-auth clients update --help).

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'clients delete': `Usage: talent-auth clients delete <clientId>

Deletes the client configuration: its secret stops working at once. Access tokens already issued
stay valid until they expire.

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'apps create': `Usage: talent-auth apps create --name <name> --redirect-uri <uri> [--redirect-uri ...]
         --type public|confidential [--description <text>] [--no-pkce] [--first-party]
         [--resource-server] [--tenant <id> [--all-tenants]] [--post-logout-redirect-uri <uri> ...]
         [--backchannel-logout-uri <uri>] [--profile standard|high-security]
         [--auth-method client_secret_basic|private_key_jwt]
         [--jwks-file <file> | --jwks-uri <url>] [--dpop required|optional] [--require-par]

Registers an app for named-user sign-in and prints its client_id (and, for a confidential
client_secret_basic app, its client_secret, shown only this once).

  --name <name>             display name (shown on the consent page)
  --description <text>      optional
  --redirect-uri <uri>      an exact redirect URI; repeat for several. https, http://localhost or
                            http://127.0.0.1, or a custom scheme://...
  --type <type>             public (SPA, mobile: no secret, PKCE always on) or confidential
                            (server-side: a secret, refresh tokens)
  --no-pkce                 confidential apps only, and only when every redirect URI is https
  --first-party             a platform-owned app: its users' tokens may manage all their consents,
                            and it may ask for the management right (manage.integrations)
  --resource-server         a confidential app of a resource server of the platform: it may
                            introspect access tokens of every tenant (others: only their own
                            tenant's, and the tokens issued to them)
  --tenant <id>             the tenant that owns the app: only its users may authorize it
                            (without it: an operator's app, open to every tenant)
  --all-tenants             with --tenant: users of every tenant may authorize it all the same
  --post-logout-redirect-uri <uri>
                            where a sign-out the app starts may send the browser back (exact
                            match, the redirect-URI rules); repeat for several
  --backchannel-logout-uri <uri>
                            https (or http://localhost) endpoint of the app's server that gets a
                            signed logout token when one of its users signs out; with --tenant:
                            https on port 443 to a public host name. A local or private host is
                            reached only when listed in backchannelLogout.privateHosts
  --profile <profile>       standard (default) or high-security: a confidential private_key_jwt
                            app with DPoP and pushed authorization requests required, PKCE and
                            https redirect URIs (docs/high-security.md); an app that does not
                            conform is refused, naming the setting

${PAR_OPTIONS}

${AUTHENTICATION_OPTIONS}

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'apps list': `Usage: talent-auth apps list

Lists the app registrations, oldest first (never their secrets).

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'apps update': `Usage: talent-auth apps update <clientId> [--name <name>] [--description <text>]
         [--auth-method client_secret_basic|private_key_jwt] [--jwks-file <file> | --jwks-uri <url>]
         [--dpop required|optional] [--require-par | --no-require-par]
         [--profile standard|high-security] [--actor <name>]

Changes the fields given (at least one); the others stay. --description "" removes the
description. Prints the app (a new secret only when it switches to client_secret_basic, once).
The method and keys are a confidential app's only (a public app does not authenticate).

  --name <name>             display name (shown on the consent page)
  --description <text>      "" removes it
  --profile <profile>       standard or high-security (docs/high-security.md); a change the
                            profile does not allow is refused, naming the setting
${PAR_OPTIONS}
${ACTOR_OPTION}

${AUTHENTICATION_OPTIONS}

${CLIENT_KEY_ROTATION}

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'apps rotate-secret': `Usage: talent-auth apps rotate-secret <clientId>

Gives a confidential app a new secret and prints it once; the previous one stops working at once.
A private_key_jwt app has no secret (refused): it rotates its keys with apps update.

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'apps delete': `Usage: talent-auth apps delete <clientId>

Deletes the app registration: sign-ins and token requests for it stop at once.

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'keys generate': `Usage: talent-auth keys generate [--alg <alg>]... --out <file> [--force]

Writes a private JSON Web Key Set for JWKS_FILE (example server) or keys.jwks (createAuthServer).
Each key gets kid (its RFC 7638 thumbprint), alg and use: "sig". The file is created with mode
0600. Needs no Redis.

  --alg <alg>     ES256, RS256, PS256 or EdDSA; repeat for several. Default: ES256 and RS256
                  (the server needs a key for its access-token algorithm, ES256 by default, an
                  RSA key for RS256 ID tokens, and one for each other algorithm of its
                  idTokenAlgorithms option, e.g. --alg EdDSA)
  --out <file>    where to write
  --force         replace an existing file (otherwise it is never touched)

${OUTPUT_OPTIONS}

Exit codes: 0 success, 1 usage error or the file cannot be written.
`,
  'keys list': `Usage: talent-auth keys list (--file <file> | --store)

Lists the keys of a JWKS file: kid, alg, key type and state. signing: the first key of its
algorithm, it signs that algorithm's tokens; published: at /oauth2/jwks for verification only.
Never shows private key members. With --store, also when each key's next step is safe.

${FILE_OPTION}
${STORED_KEYS_OPTION}

${OUTPUT_OPTIONS}

${KEY_EXIT_CODES}
`,
  'keys add': `Usage: talent-auth keys add (--file <file> | --store) --alg <alg> [--alg ...]

Key rotation step 1 (publish the next key): appends a new private key per --alg (kid: its RFC 7638
thumbprint). Appended after the signing key of its algorithm, it is published but signs nothing
(the first key of an algorithm that has none signs at once).

Then deploy the file to every instance and restart them all. Before step 2 (keys promote), wait
at least the longest time any verifier caches the JWKS, counted from the last restart: resource
servers using the kit with a JWKS URL keep it up to jwksCacheMaxAgeSeconds (600 s by default;
they also refetch on an unknown kid, at most once per jwksCooldownSeconds, 30 s), and apps
verifying ID tokens, other JOSE libraries and HTTP caches have their own cache times. A verifier
that still holds the old key set would refuse the tokens of the new key. Verifiers given a fixed
key set (createTokenVerifier({ jwks: { keys } })) need the new public key before step 2.

  --alg <alg>     ES256, RS256, PS256 or EdDSA; repeat for several (e.g. ES256 for access
                  tokens and RS256 for ID tokens)
${FILE_OPTION}
${STORED_KEYS_OPTION}

${OUTPUT_OPTIONS}

${KEY_EXIT_CODES}
`,
  'keys promote': `Usage: talent-auth keys promote (--file <file> | --store [--force]) --kid <kid>

Key rotation step 2 (switch signing): moves the key before the other keys of its algorithm, so it
signs that algorithm's tokens; the previous signing key stays published, so the tokens it signed
keep verifying. Promoting the signing key changes nothing.

Then deploy the file to every instance and restart them all (until an instance restarts it signs
with the previous key; both keys are published everywhere, so every token verifies meanwhile).
Before step 3 (keys retire), wait at least the longest lifetime of a token the previous key signed,
counted from the last restart: access tokens at most 3600 s (client_credentials 3600 s, named
users namedUserAccessTokenTtl or the tenant's accessTokenTtl, at most 3600 s), ID tokens 3600 s;
plus clock skew (the kit's clockToleranceSeconds, 5 s by default, and any drift between hosts).
65 minutes is enough for the defaults.

  --kid <kid>     the key to sign with (see keys list)
${FILE_OPTION}
${STORED_KEYS_OPTION}

${OUTPUT_OPTIONS}

${KEY_EXIT_CODES}
`,
  'keys retire': `Usage: talent-auth keys retire (--file <file> | --store [--force]) --kid <kid>

Key rotation step 3 (retire the old key): removes a key that no longer signs. Refuses the signing
key of an algorithm (promote another key first) and so never leaves an algorithm without one.
Only retire a key once every instance has been restarted without it signing and its tokens have
expired (keys promote --help): tokens it signed stop verifying when verifiers drop it.

Then deploy the file to every instance and restart them all.

  --kid <kid>     the key to remove (see keys list)
${FILE_OPTION}
${STORED_KEYS_OPTION}

${OUTPUT_OPTIONS}

${KEY_EXIT_CODES}
`,
  'audit list': `Usage: talent-auth audit list (--tenant <id> | --platform) [--type <type>] [--since <time>]
         [--until <time>] [--limit <n>] [--cursor <cursor>]

The audit trail: who did what to which client, app, consent, session or key, newest first.

  --tenant <id>       the events of this tenant
  --platform          the events of no tenant (the operator's apps, keys, failed sign-ins)
  --type <type>       only this type, e.g. client_configuration.secret_rotated, consent.revoked
  --since <time>      from this time on (ISO 8601, e.g. 2026-11-01T00:00:00Z)
  --until <time>      up to this time (ISO 8601)
  --limit <n>         at most n events (1..200, default 50)
  --cursor <cursor>   the next page (printed under a full page)

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
  'sign-ins unlock': `Usage: talent-auth sign-ins unlock --username <username> [--tenant <id>] [--actor <name>]
         [--cookie-key <key>]

Lifts a user's sign-in hold: clears the failed sign-ins counted for the username (sign-in
throttling: the rateLimits.failedSignIn option), so that she can sign in from a new
browser at once. The hold of an address is not lifted (it ends with its window). Recorded in the
audit trail (sign_in.unlocked, actor operator, with --actor as its name) with a hint of the
username, never the username itself: in the trail of the tenant --tenant names, else in the events
of no tenant. The CLI has no AccountStore: it takes --tenant as you state it and does not check
that the username is one of that tenant's users (usernames are counted alike in every tenant).

The counters are kept under an HMAC of the username whose key comes from the server's first
cookie key: the CLI needs that key to find them. It reads COOKIE_KEYS (comma-separated, as the
example server does; the first key counts), or --cookie-key. With another key nothing is found
and nothing is unlocked.

  --username <name>   the username as the user types it (letter case does not matter)
  --tenant <id>       the user's tenant: where the event is recorded (her admins see it)
${ACTOR_OPTION}
  --cookie-key <key>  the server's first cookie key (cookieKeys[0]); default: the first of env COOKIE_KEYS

${STORE_OPTIONS}

${OUTPUT_OPTIONS}

${EXIT_CODES}
`,
};
