import { NotFound } from '../../policies/errors.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../audit/trail.js';
import { operatorContext } from '../audit/operator.js';
import { Connections, MAPPABLE_CLAIMS, type ClaimMapping, type Connection, type ConnectionInput, type ConnectionPatch, type UpstreamAuthMethod } from '../federation/connections.js';
import { connectionWire } from '../http/wire-connections.js';
import { Sealer } from '../records/sealed.js';
import { required, type OptionName } from './args.js';
import type { Command, CommandContext } from './commands.js';
import { UsageError } from './errors.js';
import { json, safe, table } from './output.js';

/*
 * `talent-auth connections list|create|update|delete`: a tenant's identity providers (enterprise
 * sign-in), on the store, with the server's own Connections (what it accepts is exactly what
 * `auth.connections` accepts: the operator's rules, a loopback issuer allowed for development).
 *
 * - The client secret never comes from the command line (it would show in `ps` and the shell's
 *   history): from standard input (`--client-secret-stdin`) or an environment variable named by
 *   `--client-secret-env`; `--client-secret` is refused saying so. It is never printed.
 * - It is sealed as the server seals it: under the server's first factor key (`factorKeys[0]`, or
 *   its first cookie key when it has no factor keys), which the CLI reads from the environment
 *   only (a variable named by `--factor-key-env`, else FACTOR_KEYS, else COOKIE_KEYS): the key
 *   could open every sealed secret of the server, so `--factor-key` (argv, seen in `ps`) is refused
 *   like `--client-secret`. Sealed under another key, the server cannot open it.
 * - The CLI works on the store alone and does not know the server's URL: a connection's redirect
 *   URI (`{baseUrl}{pathPrefix}/oauth2/federation/callback/{id}`, one per connection) is printed
 *   whole only with `--base-url`, else as that template with the id filled in.
 * - Every change is audited as the operator's, with `--actor` as her name.
 */

/** The largest secret read from standard input (a client secret is far shorter). */
const MAX_STDIN_SECRET = 4096;

const SECRET_FLAGS: readonly OptionName[] = ['client-secret', 'client-secret-stdin', 'client-secret-env', 'factor-key', 'factor-key-env'];

/** Where the callbacks are under the server's URL (`{baseUrl}{pathPrefix}`): src/endpoints/federation/. */
const CALLBACK_PATH = '/oauth2/federation/callback';

/**
 * The server's `{baseUrl}{pathPrefix}` from `--base-url` (an http(s) URL without query, fragment or
 * credentials; a trailing slash dropped), or undefined when not given.
 */
function baseUrlOf(context: CommandContext): string | undefined {
  const given = context.args.values['base-url'];
  if (given === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password || /[?#]/.test(given)) {
    throw new UsageError(`--base-url "${safe(given)}": expected the server's public URL with its pathPrefix (its issuer without /oauth2), e.g. https://auth.example.com`, '--base-url');
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
const FIELD_FLAGS: readonly OptionName[] = ['name', 'issuer', 'client-id', 'domain', 'scope', 'claim', 'mfa-acr', 'token-endpoint-auth-method'];

/**
 * The store's connections; the sealer only when a secret is to be sealed (else nothing is); with
 * `--base-url`, connections name their redirect URI.
 */
async function connections(context: CommandContext, sealingKey: string | undefined): Promise<Connections> {
  const base = baseUrlOf(context);
  const store = await context.store();
  const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, { info() {}, warn() {}, error() {} }, undefined);
  return new Connections(store.records, new Sealer(sealingKey === undefined ? [] : [sealingKey], 'connection-secrets'), audit, Date.now, base === undefined ? undefined : `${base}${CALLBACK_PATH}`);
}

/** The sealing key, from the environment only: `--factor-key-env VAR`, else FACTOR_KEYS, else COOKIE_KEYS (the first of a list). */
function sealingKeyOf(context: CommandContext, command: string): string {
  const { values } = context.args;
  const named = values['factor-key-env'];
  if (named !== undefined) {
    const key = firstOf(context.io.env[named]);
    if (!key) throw new UsageError(`${command}: --factor-key-env: the environment variable ${safe(named)} is not set`, '--factor-key-env');
    return key;
  }
  const key = firstOf(context.io.env.FACTOR_KEYS) ?? firstOf(context.io.env.COOKIE_KEYS);
  if (!key) {
    throw new UsageError(
      `${command}: the secret is sealed under the server's first factor key (or its first cookie key when it has no factorKeys): set FACTOR_KEYS or COOKIE_KEYS as for the server, or name the variable that holds it with --factor-key-env <VAR>`,
      '--factor-key-env',
    );
  }
  return key;
}

/** The secret given by stdin or an environment variable, with the key that seals it as the server does; undefined when none is given. */
async function secretOf(context: CommandContext, command: string): Promise<{ secret: string; key: string } | undefined> {
  const { values } = context.args;
  if (values['client-secret'] !== undefined) {
    throw new UsageError(`${command}: --client-secret is not taken: a secret on the command line shows in ps and the shell's history; use --client-secret-stdin or --client-secret-env <VAR>`, '--client-secret');
  }
  if (values['factor-key'] !== undefined) {
    throw new UsageError(
      `${command}: --factor-key is not taken: the server's sealing key on the command line shows in ps and the shell's history; set FACTOR_KEYS or COOKIE_KEYS as for the server, or name the variable that holds it with --factor-key-env <VAR>`,
      '--factor-key',
    );
  }
  if (values['client-secret-stdin'] && values['client-secret-env'] !== undefined) {
    throw new UsageError(`${command}: give --client-secret-stdin or --client-secret-env, not both`, '--client-secret-env');
  }
  let secret: string | undefined;
  if (values['client-secret-stdin']) {
    if (!context.io.stdin) throw new UsageError(`${command}: standard input cannot be read here`, '--client-secret-stdin');
    const read = await context.io.stdin(MAX_STDIN_SECRET);
    if (read === undefined) throw new UsageError(`${command}: --client-secret-stdin: more than ${MAX_STDIN_SECRET} bytes on standard input`, '--client-secret-stdin');
    // One line, as `echo` or a password manager's pipe writes it: the line break is not the secret's.
    secret = read.replace(/\r?\n$/, '');
    if (secret === '') throw new UsageError(`${command}: --client-secret-stdin: standard input is empty`, '--client-secret-stdin');
  } else if (values['client-secret-env'] !== undefined) {
    const name = values['client-secret-env'];
    secret = context.io.env[name];
    if (secret === undefined || secret === '') throw new UsageError(`${command}: --client-secret-env: the environment variable ${safe(name)} is not set`, '--client-secret-env');
  }
  if (secret === undefined) return undefined;
  return { secret, key: sealingKeyOf(context, command) };
}

const firstOf = (list: string | undefined) => list?.split(',').find(Boolean);

/** `--claim email=upn` per flag: our claim → the provider's. */
function claimMappingOf(flags: readonly string[]): ClaimMapping {
  const mapping: Record<string, string> = {};
  for (const flag of flags) {
    const equals = flag.indexOf('=');
    const ours = flag.slice(0, equals).trim();
    if (equals <= 0 || !(MAPPABLE_CLAIMS as readonly string[]).includes(ours)) {
      throw new UsageError(`--claim "${safe(flag)}": expected <claim>=<provider's claim>, <claim> one of ${MAPPABLE_CLAIMS.join(', ')}; e.g. email=upn`, '--claim');
    }
    mapping[ours] = flag.slice(equals + 1).trim();
  }
  return mapping as ClaimMapping;
}

/** The fields the flags give (absent flags: absent fields). */
function fieldsOf(context: CommandContext): ConnectionPatch {
  const { values } = context.args;
  return {
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values.issuer !== undefined ? { issuer: values.issuer } : {}),
    ...(values['client-id'] !== undefined ? { clientId: values['client-id'] } : {}),
    ...(values.domain?.length ? { domains: values.domain } : {}),
    ...(values.scope?.length ? { scopes: values.scope } : {}),
    ...(values.claim?.length ? { claimMapping: claimMappingOf(values.claim) } : {}),
    ...(values['mfa-acr']?.length ? { mfaAcrValues: values['mfa-acr'] } : {}),
    ...(values['token-endpoint-auth-method'] !== undefined ? { tokenEndpointAuthMethod: values['token-endpoint-auth-method'] as UpstreamAuthMethod } : {}),
  };
}

/** A connection in words (never its secret: whether there is one). */
function described(connection: Connection): string {
  const mapping = Object.entries(connection.claimMapping).map(([ours, theirs]) => `${ours}=${theirs}`).join(' ');
  return [
    `  id:            ${connection.id}`,
    `  tenant:        ${safe(connection.tenant)}`,
    `  name:          ${safe(connection.name)}`,
    `  issuer:        ${safe(connection.issuer)}`,
    `  client_id:     ${safe(connection.clientId)}`,
    `  auth method:   ${connection.tokenEndpointAuthMethod}${connection.hasClientSecret ? ' (client secret kept, sealed)' : ''}`,
    `  scopes:        ${safe(connection.scopes.join(' '))}`,
    `  domains:       ${connection.domains.length ? safe(connection.domains.join(' ')) : '-'}`,
    ...(mapping ? [`  claim mapping: ${safe(mapping)}`] : []),
    ...(connection.mfaAcrValues.length ? [`  mfa acr:       ${safe(connection.mfaAcrValues.join(' '))}`] : []),
    `  sign-out:      ${connection.signOutUpstream ? 'also at the provider' : 'ours only'}`,
    `  redirect URI:  ${redirectUriOf(connection)}`,
  ].join('\n') + '\n';
}

/** Its redirect URI: whole with `--base-url`, else the template with its id (the CLI does not know the server's URL). */
function redirectUriOf(connection: Connection): string {
  return connection.redirectUri ?? `<baseUrl><pathPrefix>${CALLBACK_PATH}/${encodeURIComponent(connection.id)}`;
}

/** What to do at the provider once a connection exists: register its own redirect URI. */
function registerAtProvider(connection: Connection): string {
  return connection.redirectUri !== undefined
    ? `Register its redirect URI at the provider:\n  ${connection.redirectUri}\n`
    : `Register its redirect URI at the provider:\n  ${redirectUriOf(connection)}\n`
      + "with the server's baseUrl and pathPrefix (its issuer without /oauth2); or give --base-url to print it whole.\n";
}

function out(context: CommandContext, machine: unknown, human: string): void {
  context.io.stdout(context.json ? json(machine) : human);
}

const connectionsList: Command = {
  options: ['tenant', 'base-url'],
  operands: [],
  async run(context) {
    const tenant = required(context.args.values.tenant, 'tenant', 'connections list');
    const listed = await (await connections(context, undefined)).list(tenant);
    const human = listed.length === 0
      ? `No connections in tenant ${safe(tenant)}.\n`
      : table(['ID', 'NAME', 'ISSUER', 'DOMAINS', 'SECRET'], listed.map((connection) => [
        connection.id,
        safe(connection.name),
        safe(connection.issuer),
        safe(connection.domains.join(' ') || '-'),
        connection.hasClientSecret ? 'kept' : '-',
      ]));
    out(context, { connections: listed.map(connectionWire) }, human);
  },
};

const connectionsCreate: Command = {
  options: ['tenant', ...FIELD_FLAGS, 'sign-out-upstream', ...SECRET_FLAGS, 'base-url', 'actor'],
  operands: [],
  async run(context) {
    const command = 'connections create';
    const { values } = context.args;
    const secret = await secretOf(context, command);
    const input: ConnectionInput = {
      ...fieldsOf(context),
      tenant: required(values.tenant, 'tenant', command),
      name: required(values.name, 'name', command),
      issuer: required(values.issuer, 'issuer', command),
      clientId: required(values['client-id'], 'client-id', command),
      domains: values.domain ?? [],
      ...(values['sign-out-upstream'] ? { signOutUpstream: true } : {}),
      ...(secret ? { clientSecret: secret.secret } : {}),
    };
    const created = await (await connections(context, secret?.key)).create(input, operatorContext(values.actor));
    out(context, connectionWire(created), `Created connection "${safe(created.name)}" in tenant ${safe(created.tenant)}.\n${described(created)}${registerAtProvider(created)}`);
  },
};

const connectionsUpdate: Command = {
  options: [...FIELD_FLAGS, 'sign-out-upstream', 'no-sign-out-upstream', 'remove-client-secret', ...SECRET_FLAGS, 'base-url', 'actor'],
  operands: ['id'],
  async run(context) {
    const command = 'connections update';
    const [id] = context.operands as [string];
    const { values } = context.args;
    if (values['sign-out-upstream'] && values['no-sign-out-upstream']) {
      throw new UsageError(`${command}: give --sign-out-upstream or --no-sign-out-upstream, not both`, '--no-sign-out-upstream');
    }
    const secret = await secretOf(context, command);
    if (secret && values['remove-client-secret']) {
      throw new UsageError(`${command}: give a new client secret or --remove-client-secret, not both`, '--remove-client-secret');
    }
    const patch: ConnectionPatch = {
      ...fieldsOf(context),
      ...(values['sign-out-upstream'] ? { signOutUpstream: true } : {}),
      ...(values['no-sign-out-upstream'] ? { signOutUpstream: false } : {}),
      ...(secret ? { clientSecret: secret.secret } : {}),
      ...(values['remove-client-secret'] ? { clientSecret: '' } : {}),
    };
    if (Object.keys(patch).length === 0) throw new UsageError(`${command}: nothing to change; see talent-auth ${command} --help`);
    const changed = await (await connections(context, secret?.key)).update(id, patch, operatorContext(values.actor));
    out(context, connectionWire(changed), `Updated connection ${changed.id}.\n${described(changed)}`);
  },
};

const connectionsDelete: Command = {
  options: ['actor'],
  operands: ['id'],
  async run(context) {
    const [id] = context.operands as [string];
    const deleted = await (await connections(context, undefined)).delete(id, operatorContext(context.args.values.actor));
    if (!deleted) throw new NotFound(`connection ${id}`);
    out(context, { id, deleted: true }, `Deleted connection ${id}; its domains are free again.\n`);
  },
};

/** The connection commands of the CLI. */
export const CONNECTION_COMMANDS: Record<string, Command> = {
  'connections list': connectionsList,
  'connections create': connectionsCreate,
  'connections update': connectionsUpdate,
  'connections delete': connectionsDelete,
};
