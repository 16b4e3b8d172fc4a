/* Help texts of `talent-auth connections ...` (src/cli/connections.ts), merged into help.ts. */

const STORE_AND_OUTPUT = `Store options:
  --redis <url>          Redis URL (redis:// or rediss://); default: env REDIS_URL. Required.
  --key-prefix <prefix>  key prefix of the deployment (default: talent-auth:)

Output:
  --json                 machine-readable JSON on stdout (snake_case names, as the management API);
                         errors as JSON on stderr
  -h, --help             this help

Exit codes: 0 success, 1 usage or validation error (stderr names the field), 2 Redis unreachable.`;

const ACTOR = `  --actor <name>      who acts, recorded as the operator's name in the audit trail`;

const SECRET = `The client secret is never taken from the command line (it would show in ps and the shell's
history), and never printed:
  --client-secret-stdin     read it from standard input (one line; its line break is dropped),
                            e.g. from a password manager: op read ... | talent-auth connections ...
  --client-secret-env <VAR> read it from the environment variable VAR
It is stored sealed as the server seals it, under the server's first factor key (factorKeys[0],
or its first cookie key when the server has no factorKeys), read from the environment only: the
first of the variable named by --factor-key-env, else of env FACTOR_KEYS, else of env COOKIE_KEYS.
--factor-key is refused: the key on the command line would show in ps and the shell's history.
Sealed under another key, the server cannot open it and sign-ins through the connection fail.
  --factor-key-env <VAR>    read the server's first factor key from the environment variable VAR`;

const BASE_URL = `  --base-url <url>    the server's public URL with its pathPrefix (its issuer without /oauth2),
                      e.g. https://auth.example.com: the connection's redirect URI is then printed
                      whole (and in --json as redirect_uri); without it, as
                      <baseUrl><pathPrefix>/oauth2/federation/callback/<id>`;

const FIELDS = `  --name <name>                      shown on the sign-in page: "Continue with <name>"
  --issuer <url>                     the provider's issuer (its discovery document is at
                                     <issuer>/.well-known/openid-configuration): https, or plain
                                     http on a loopback host (a provider for development)
  --client-id <id>                   our client ID at the provider
  --domain <domain>                  an email domain the connection owns (repeat for more); a
                                     domain belongs to one connection of one tenant
  --scope <scope>                    a scope asked of the provider (repeat; openid is always added;
                                     default openid email profile)
  --claim <claim>=<provider claim>   map a claim, e.g. --claim email=upn (repeat)
  --mfa-acr <acr>                    a provider acr value that means a multi-factor sign-in (repeat)
  --token-endpoint-auth-method <m>   client_secret_basic (default with a secret), client_secret_post,
                                     or private_key_jwt (default without: our signing key)`;

/** `talent-auth connections --help`. */
export const CONNECTIONS_GROUP_HELP = `Usage: talent-auth connections <command> [options]

  list --tenant <id>
  create --tenant <id> --name <n> --issuer <url> --client-id <id> [--domain <d> ...] [--scope <s> ...]
         [--claim <c>=<p> ...] [--token-endpoint-auth-method <m>] [--sign-out-upstream]
         [--client-secret-stdin | --client-secret-env <VAR>] [--base-url <url>] [--actor <name>]
  update <id> [the fields of create] [--no-sign-out-upstream] [--remove-client-secret] [--actor <name>]
  delete <id> [--actor <name>]

A tenant's identity providers (enterprise sign-in). Run talent-auth connections <command> --help for details.

${STORE_AND_OUTPUT}
`;

/** `talent-auth connections <command> --help`. */
export const CONNECTIONS_COMMAND_HELP: Record<string, string> = {
  'connections list': `Usage: talent-auth connections list --tenant <id> [--base-url <url>]

The identity providers of a tenant, oldest first: id, name, issuer, domains, and whether a client
secret is kept (never the secret).

  --tenant <id>       the tenant
${BASE_URL}

${STORE_AND_OUTPUT}
`,
  'connections create': `Usage: talent-auth connections create --tenant <id> --name <name> --issuer <url> --client-id <id>
         [--domain <domain> ...] [--scope <scope> ...] [--claim <claim>=<provider claim> ...]
         [--mfa-acr <acr> ...] [--token-endpoint-auth-method <method>] [--sign-out-upstream]
         [--client-secret-stdin | --client-secret-env <VAR>] [--factor-key-env <VAR>]
         [--base-url <url>] [--actor <name>]

Connects a tenant's OpenID Connect provider, as auth.connections.create() does (the operator's
rules: an issuer may be a loopback provider over http). At most 20 connections per tenant.
Recorded in the audit trail (connection.created, actor operator, with --actor as its name), never
the secret.

Each connection has its own redirect URI, known once it exists: register it at the provider after
creating the connection. It is <baseUrl><pathPrefix>/oauth2/federation/callback/<id>; the CLI does
not know the server's URL, so it prints that with the new id filled in, or whole with --base-url.

  --tenant <id>                      the tenant whose users sign in through it
${FIELDS}
  --sign-out-upstream                signing out of our server also signs out at the provider
${BASE_URL}
${ACTOR}

${SECRET}

${STORE_AND_OUTPUT}
`,
  'connections update': `Usage: talent-auth connections update <id> [--name <name>] [--issuer <url>] [--client-id <id>]
         [--domain <domain> ...] [--scope <scope> ...] [--claim <claim>=<provider claim> ...]
         [--mfa-acr <acr> ...] [--token-endpoint-auth-method <method>]
         [--sign-out-upstream | --no-sign-out-upstream]
         [--client-secret-stdin | --client-secret-env <VAR> | --remove-client-secret]
         [--factor-key-env <VAR>] [--base-url <url>] [--actor <name>]

Changes a connection: the fields given, a list (--domain, --scope, --claim, --mfa-acr) replaced
whole by the flags given; domains dropped are free again. Recorded as connection.updated with the
fields changed.

${FIELDS}
  --sign-out-upstream / --no-sign-out-upstream   sign out at the provider too, or not
  --remove-client-secret             remove the secret (with --token-endpoint-auth-method private_key_jwt)
${BASE_URL}
${ACTOR}

${SECRET}

${STORE_AND_OUTPUT}
`,
  'connections delete': `Usage: talent-auth connections delete <id> [--actor <name>]

Deletes a connection: its users no longer sign in through it, its domains are free again.
Recorded as connection.deleted.

${ACTOR}

${STORE_AND_OUTPUT}
`,
};
