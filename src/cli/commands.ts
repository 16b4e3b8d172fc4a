import { resolve } from 'node:path';
import type { Store } from '../../adapters/types.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { NotFound } from '../../policies/errors.js';
import { AppRegistrations, type ClientType, type EngineCheck } from '../records/app-registrations.js';
import { ClientConfigurations } from '../records/client-configurations.js';
import { SecondFactorRules, TenantSettings } from '../records/tenant-settings.js';
import { SECURITY_PROFILES, type SecurityProfile } from '../../policies/high-security.js';
import { generateJwks, generateSigningKey, keyStates } from '../engine/keys.js';
import { parseResources, required, type OptionName, type ParsedArgs } from './args.js';
import { loadApiCatalog } from './apis.js';
import { UsageError } from './errors.js';
import {
  keySummary,
  parseAlgorithms,
  readJwksFile,
  SIGNING_ALGORITHMS,
  summaries,
  writeJwksFile,
  type KeyFile,
  type KeySummary,
} from './keys.js';
import { appWire, clientWire, json, resourcesInWords, safe, SECRET_NOTE, table, type CliIo } from './output.js';
import { storeGiven } from './store.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, OPERATOR, type AuditEventType } from '../audit/trail.js';
import { Consents } from '../records/consents.js';
import type { Logger } from '../logger.js';
import { SignInHolds } from '../limits/sign-in.js';
import { signingKeyChanged } from '../audit/events.js';
import { operatorContext } from '../audit/operator.js';
import { Factors } from '../factors/index.js';
import { userFactorsWire } from '../http/wire.js';
import { addStored, listStored, promoteStored, retireStored, type StoredKeysContext } from './stored-keys.js';
import { AUTHENTICATION_FLAGS, authenticationInput, authenticationLines, PAR_FLAGS } from './client-authentication.js';

export interface CommandContext {
  args: ParsedArgs;
  /** The positionals after `<group> <command>`. */
  operands: string[];
  io: CliIo;
  json: boolean;
  /** Opens the Redis store on first use (closed by the caller). */
  store(): Promise<Store>;
}

export interface Command {
  options: readonly OptionName[];
  /** Names of the positional operands, e.g. ['clientId']. */
  operands: readonly string[];
  run(context: CommandContext): Promise<void>;
}

/**
 * The server checks each app against oidc-provider's client metadata rules as well
 * (provider.Client.validate); that needs a configured engine, which the CLI does not build. Our
 * own policies (redirect URIs, PKCE, client type, ID-token algorithm) run in AppRegistrations
 * itself, identically; the CLI offers no flag that only the engine would judge.
 */
const ownPoliciesOnly: EngineCheck = async () => {};

/** The CLI writes the log lines of its events nowhere: it prints what it did, and the event is stored. */
const QUIET: Logger = { info() {}, warn() {}, error() {} };

/**
 * The audit trail on the store, with the default retention (the server's own settings trim a
 * tenant's events at its next write). Every change the CLI makes is the operator's.
 */
async function auditTrail(context: CommandContext): Promise<AuditTrail> {
  return new AuditTrail(await context.store(), DEFAULT_AUDIT_SETTINGS, QUIET, undefined);
}

/** ClientConfigurations needs the catalog only to validate resources: create (and update) read it. */
async function clientConfigurations(context: CommandContext, needsCatalog: boolean): Promise<ClientConfigurations> {
  const { args, io } = context;
  const catalog = needsCatalog ? loadApiCatalog(args.values.apis ?? io.env.TALENT_AUTH_APIS, io.cwd) : new ApiCatalog([]);
  const store = await context.store();
  const audit = await auditTrail(context);
  return new ClientConfigurations(store.records, catalog, audit, tenantProfileOf(store.records, audit));
}

/**
 * The security profile a tenant's own settings select (policies/high-security.ts): the CLI has no
 * host policy to read, so it checks a new client against the tenant's settings only (the server
 * enforces the host's at run time).
 */
function tenantProfileOf(records: ConstructorParameters<typeof TenantSettings>[0], audit: AuditTrail): (tenant: string) => Promise<SecurityProfile> {
  const rules = new SecondFactorRules(undefined, new TenantSettings(records, audit));
  return (tenant) => rules.profile(tenant);
}

/** The `--profile` flag: standard or high-security. */
function profileFlag(value: string | undefined): { profile?: SecurityProfile } {
  if (value === undefined) return {};
  if (!(SECURITY_PROFILES as readonly string[]).includes(value)) throw new UsageError(`--profile must be ${SECURITY_PROFILES.join(' or ')}`, '--profile');
  return { profile: value as SecurityProfile };
}

async function appRegistrations(context: CommandContext): Promise<AppRegistrations> {
  const store = await context.store();
  const audit = await auditTrail(context);
  // Deleting an app, or changing its type, ends its grants and consents here as on the server.
  const consents = new Consents(store, new ApiCatalog([]), audit);
  return new AppRegistrations(store.records, ownPoliciesOnly, (clientId, by, reason) => consents.endAllOf(clientId, by, reason), audit, tenantProfileOf(store.records, audit));
}

function out(context: CommandContext, machine: unknown, human: string): void {
  context.io.stdout(context.json ? json(machine) : human);
}

/** The lines of a client configuration's answer: its ID, its secret when it has a new one, its method and keys. */
function clientLines(client: Parameters<typeof clientWire>[0]): string {
  return [
    `  client_id:     ${client.clientId}`,
    ...(client.clientSecret ? [`  client_secret: ${client.clientSecret}`] : []),
    `  resources:     ${safe(resourcesInWords(client.resources))}`,
    ...authenticationLines(client),
    ...(client.clientSecret ? [SECRET_NOTE] : []),
  ].join('\n') + '\n';
}

const clientsCreate: Command = {
  options: ['tenant', 'name', 'category', 'description', 'resource', 'constraint', 'profile', ...AUTHENTICATION_FLAGS],
  operands: [],
  async run(context) {
    const { values } = context.args;
    const command = 'clients create';
    if (!values.resource?.length) required(undefined, 'resource', command);
    const input = {
      tenant: required(values.tenant, 'tenant', command),
      name: required(values.name, 'name', command),
      category: required(values.category, 'category', command),
      ...(values.description !== undefined ? { description: values.description } : {}),
      resources: parseResources(values.resource, values.constraint),
      ...profileFlag(values.profile),
      ...authenticationInput(context.args.values, context.io.cwd, command),
    };
    const service = await clientConfigurations(context, true);
    const created = await service.create(input);
    out(context, clientWire(created), `Created client configuration "${safe(created.name)}" in tenant ${safe(created.tenant)}.\n${clientLines(created)}`);
  },
};

const clientsUpdate: Command = {
  options: ['name', 'category', 'description', 'profile', ...AUTHENTICATION_FLAGS, 'actor'],
  operands: ['clientId'],
  async run(context) {
    const command = 'clients update';
    const [clientId] = context.operands as [string];
    const { values } = context.args;
    const patch = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.category !== undefined ? { category: values.category } : {}),
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...authenticationInput(context.args.values, context.io.cwd, command),
      ...profileFlag(values.profile),
    };
    if (Object.keys(patch).length === 0) throw new UsageError(`${command}: nothing to change; see talent-auth ${command} --help`);
    const changed = await (await clientConfigurations(context, false)).update(clientId, patch, operatorContext(values.actor));
    out(context, clientWire(changed), `Updated client configuration "${safe(changed.name)}".\n${clientLines(changed)}`);
  },
};

const clientsList: Command = {
  options: ['tenant'],
  operands: [],
  async run(context) {
    const tenant = required(context.args.values.tenant, 'tenant', 'clients list');
    const clients = await (await clientConfigurations(context, false)).list(tenant);
    const human = clients.length === 0
      ? `No client configurations in tenant ${safe(tenant)}.\n`
      : table(
        ['CLIENT_ID', 'NAME', 'CATEGORY', 'RESOURCES', 'CREATED_AT'],
        clients.map((client) => [
          client.clientId,
          safe(client.name),
          safe(client.category),
          safe(resourcesInWords(client.resources)),
          client.createdAt,
        ]),
      );
    out(context, { clients: clients.map(clientWire) }, human);
  },
};

const clientsRotateSecret: Command = {
  options: [],
  operands: ['clientId'],
  async run(context) {
    const [clientId] = context.operands as [string];
    const { clientSecret } = await (await clientConfigurations(context, false)).rotateSecret(clientId);
    out(
      context,
      { client_id: clientId, client_secret: clientSecret },
      `New secret for client configuration ${clientId}; the previous one no longer works.\n`
        + `  client_id:     ${clientId}\n`
        + `  client_secret: ${clientSecret}\n`
        + `${SECRET_NOTE}\n`,
    );
  },
};

const clientsDelete: Command = {
  options: [],
  operands: ['clientId'],
  async run(context) {
    const [clientId] = context.operands as [string];
    const deleted = await (await clientConfigurations(context, false)).delete(clientId);
    if (!deleted) throw new NotFound(`client configuration ${clientId}`);
    out(context, { client_id: clientId, deleted: true }, `Deleted client configuration ${clientId}.\n`);
  },
};

/** The lines of an app's method, keys, DPoP rule and PAR rule. */
function appAuthenticationLines(app: Parameters<typeof appWire>[0]): string[] {
  return [...authenticationLines(app), ...(app.requirePushedAuthorizationRequests ? ['  require_par:   true (pushed authorization requests only)'] : [])];
}

const appsCreate: Command = {
  options: ['name', 'description', 'redirect-uri', 'post-logout-redirect-uri', 'backchannel-logout-uri', 'type', 'no-pkce', 'first-party', 'resource-server', 'tenant', 'all-tenants', 'profile', ...AUTHENTICATION_FLAGS, ...PAR_FLAGS],
  operands: [],
  async run(context) {
    const { values } = context.args;
    const command = 'apps create';
    if (!values['redirect-uri']?.length) required(undefined, 'redirect-uri', command);
    const input = {
      name: required(values.name, 'name', command),
      ...(values.description !== undefined ? { description: values.description } : {}),
      redirectUris: values['redirect-uri'] ?? [],
      ...(values['post-logout-redirect-uri']?.length ? { postLogoutRedirectUris: values['post-logout-redirect-uri'] } : {}),
      ...(values['backchannel-logout-uri'] !== undefined ? { backchannelLogoutUri: values['backchannel-logout-uri'] } : {}),
      clientType: required(values.type, 'type', command) as ClientType,
      ...(values['no-pkce'] ? { pkceEnabled: false } : {}),
      ...(values['first-party'] ? { firstParty: true } : {}),
      ...(values['resource-server'] ? { resourceServer: true } : {}),
      ...(values.tenant !== undefined ? { tenant: values.tenant } : {}),
      ...(values['all-tenants'] ? { openToAllTenants: true } : {}),
      ...profileFlag(values.profile),
      ...authenticationInput(context.args.values, context.io.cwd, command),
    };
    if (values['all-tenants'] && values.tenant === undefined) {
      throw new UsageError('apps create: --all-tenants opens a tenant\'s app to every tenant: give --tenant too (an app without one is open to all already)', '--all-tenants');
    }
    const created = await (await appRegistrations(context)).create(input);
    const lines = [
      `Registered ${created.clientType} app "${safe(created.name)}".`,
      `  client_id:     ${created.clientId}`,
      ...(created.clientSecret ? [`  client_secret: ${created.clientSecret}`] : []),
      `  redirect_uris: ${safe(created.redirectUris.join(' '))}`,
      ...(created.postLogoutRedirectUris.length ? [`  post_logout_redirect_uris: ${safe(created.postLogoutRedirectUris.join(' '))}`] : []),
      ...(created.backchannelLogoutUri ? [`  backchannel_logout_uri: ${safe(created.backchannelLogoutUri)}`] : []),
      `  pkce_enabled:  ${created.pkceEnabled}`,
      ...(created.firstParty ? ['  first_party:   true'] : []),
      ...(created.resourceServer ? ['  resource_server: true (may introspect every tenant\'s tokens)'] : []),
      ...(created.tenant ? [`  tenant:        ${safe(created.tenant)}${created.openToAllTenants ? ' (open to all tenants)' : ' (its users only)'}`] : []),
      ...appAuthenticationLines(created),
      ...(created.clientSecret ? [SECRET_NOTE] : []),
    ];
    out(context, appWire(created), `${lines.join('\n')}\n`);
  },
};

const appsUpdate: Command = {
  options: ['name', 'description', 'profile', ...AUTHENTICATION_FLAGS, ...PAR_FLAGS, 'actor'],
  operands: ['clientId'],
  async run(context) {
    const command = 'apps update';
    const [clientId] = context.operands as [string];
    const { values } = context.args;
    const patch = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...authenticationInput(context.args.values, context.io.cwd, command),
      ...profileFlag(values.profile),
    };
    if (Object.keys(patch).length === 0) throw new UsageError(`${command}: nothing to change; see talent-auth ${command} --help`);
    const changed = await (await appRegistrations(context)).update(clientId, patch, operatorContext(values.actor));
    const lines = [
      `Updated ${changed.clientType} app "${safe(changed.name)}".`,
      `  client_id:     ${changed.clientId}`,
      ...(changed.clientSecret ? [`  client_secret: ${changed.clientSecret}`] : []),
      ...appAuthenticationLines(changed),
      ...(changed.clientSecret ? [SECRET_NOTE] : []),
    ];
    out(context, appWire(changed), `${lines.join('\n')}\n`);
  },
};

const appsList: Command = {
  options: [],
  operands: [],
  async run(context) {
    const apps = await (await appRegistrations(context)).list();
    const human = apps.length === 0
      ? 'No app registrations.\n'
      : table(
        ['CLIENT_ID', 'NAME', 'TYPE', 'PKCE', 'FIRST_PARTY', 'REDIRECT_URIS', 'CREATED_AT'],
        apps.map((app) => [
          app.clientId,
          safe(app.name),
          app.clientType,
          app.pkceEnabled ? 'yes' : 'no',
          app.firstParty ? 'yes' : 'no',
          safe(app.redirectUris.join(' ')),
          app.createdAt,
        ]),
      );
    out(context, { apps: apps.map(appWire) }, human);
  },
};

const appsRotateSecret: Command = {
  options: [],
  operands: ['clientId'],
  async run(context) {
    const [clientId] = context.operands as [string];
    const { clientSecret } = await (await appRegistrations(context)).rotateSecret(clientId);
    out(
      context,
      { client_id: clientId, client_secret: clientSecret },
      `New secret for app ${clientId}; the previous one no longer works.\n`
        + `  client_id:     ${clientId}\n`
        + `  client_secret: ${clientSecret}\n`
        + `${SECRET_NOTE}\n`,
    );
  },
};

const appsDelete: Command = {
  options: [],
  operands: ['clientId'],
  async run(context) {
    const [clientId] = context.operands as [string];
    const deleted = await (await appRegistrations(context)).delete(clientId);
    if (!deleted) throw new NotFound(`app registration ${clientId}`);
    out(context, { client_id: clientId, deleted: true }, `Deleted app registration ${clientId}.\n`);
  },
};

const keysGenerate: Command = {
  options: ['alg', 'out', 'force'],
  operands: [],
  async run(context) {
    const { values } = context.args;
    const algorithms = parseAlgorithms(values.alg);
    const file = resolve(context.io.cwd, required(values.out, 'out', 'keys generate'));
    const jwks = await generateJwks(algorithms);
    writeJwksFile(file, jwks, values.force === true);
    if (!algorithms.includes('RS256')) {
      context.io.stderr('talent-auth: warning: no RS256 key; createAuthServer needs an RSA key for RS256 ID tokens\n');
    }
    const summary = jwks.keys.map((key) => ({ kid: key.kid, alg: key.alg, kty: key.kty, ...(key.crv ? { crv: key.crv } : {}) }));
    out(
      context,
      { file, keys: summary },
      `Wrote ${jwks.keys.length} private signing key${jwks.keys.length === 1 ? '' : 's'} to ${file} (mode 0600):\n`
        + summary.map((key) => `  ${key.alg!.padEnd(6)} kid ${key.kid}\n`).join('')
        + 'Use it as JWKS_FILE (example server) or keys: { jwks } (createAuthServer). It holds private keys: keep it secret.\n',
    );
  },
};

/*
 * Key rotation on a JWKS file (the rule: the first key of each algorithm signs, later keys are only
 * published; engine/keys.ts). Servers read their keys at startup: each step takes effect on an
 * instance when it restarts with the file. The waits between steps are in the help texts and
 * docs/keys.md.
 */

/** After `keys add`, before `keys promote` (details: keys add --help). */
const PUBLISH_WAIT = 'the longest JWKS cache time of your verifiers\n(10 minutes with the resource-server kit\'s defaults; see talent-auth keys add --help)';
/** After `keys promote`, before `keys retire` (details: keys promote --help). */
const SWITCH_WAIT = 'the longest token lifetime plus clock skew\n(65 minutes with the defaults; see talent-auth keys promote --help)';

/** The stored-keys commands' view of the CLI (src/cli/stored-keys.ts). */
function storedKeysContext(context: CommandContext): StoredKeysContext {
  return { io: context.io, json: context.json, store: () => context.store(), audit: () => auditTrail(context), out: (body, human) => out(context, body, human) };
}

/** `--store` (the key set kept in the store) or `--file` (a JWKS file): exactly one. */
function keysInStore(context: CommandContext, command: string): boolean {
  const { store, file } = context.args.values;
  if (store === true && file !== undefined) throw new UsageError(`${command}: give --file (a JWKS file) or --store (the key set kept in the store), not both`, '--store');
  return store === true;
}

async function keyFile(context: CommandContext, command: string): Promise<KeyFile> {
  return readJwksFile(resolve(context.io.cwd, required(context.args.values.file, 'file', command)));
}

function keyLine(key: KeySummary): string {
  return `  ${safe(key.alg ?? '-').padEnd(6)} kid ${safe(key.kid)}  ${key.state}\n`;
}

/**
 * Records a key change in the audit trail when a store is given (`--redis`, `--store-config` or the environment):
 * keys live in a file, not in the store, so without one there is nowhere to record it, and the
 * command says so.
 */
async function keyEvent(context: CommandContext, type: 'signing_key.added' | 'signing_key.promoted' | 'signing_key.retired', kid: string, alg: string | undefined): Promise<void> {
  if (!storeGiven(context.args, context.io.env)) {
    context.io.stderr(`talent-auth: note: not recorded in the audit trail (${type}): give --redis or REDIS_URL (or another store setting) to record key changes\n`);
    return;
  }
  await (await auditTrail(context)).record(signingKeyChanged(type, OPERATOR, kid, alg));
}

const keysList: Command = {
  options: ['file', 'store'],
  operands: [],
  async run(context) {
    if (keysInStore(context, 'keys list')) return listStored(storedKeysContext(context));
    const file = await keyFile(context, 'keys list');
    const keys = summaries(file);
    out(
      context,
      { file: file.path, keys },
      table(['KID', 'ALG', 'KTY', 'STATE'], keys.map((key) => [safe(key.kid), safe(key.alg ?? '-'), safe(`${key.kty}${key.crv ? ` ${key.crv}` : ''}`), key.state])),
    );
  },
};

const keysAdd: Command = {
  options: ['file', 'alg', 'store'],
  operands: [],
  async run(context) {
    const command = 'keys add';
    if (!context.args.values.alg?.length) required(undefined, 'alg', command);
    if (keysInStore(context, command)) return addStored(storedKeysContext(context), context.args.values.alg);
    const algorithms = parseAlgorithms(context.args.values.alg);
    const file = await keyFile(context, command);
    const added = await Promise.all(algorithms.map(generateSigningKey));
    for (const key of added) await keyEvent(context, 'signing_key.added', String(key.kid), key.alg);
    const jwks = { ...file.jwks, keys: [...file.jwks.keys, ...added] };
    const next = await readAs(file.path, jwks);
    writeJwksFile(file.path, jwks, true, '--file');
    const keys = summaries(next);
    const addedKeys = keys.slice(file.jwks.keys.length);
    const promote = addedKeys.filter((key) => key.state === 'published');
    out(
      context,
      { file: file.path, added: addedKeys, keys },
      `Added to ${safe(file.path)} (mode 0600):\n${addedKeys.map(keyLine).join('')}`
        + (addedKeys.some((key) => key.state === 'signing')
          ? 'A key marked signing is the first of its algorithm: it signs from the next restart.\n'
          : '')
        + (promote.length
          ? 'A published key verifies tokens but signs none. Next: deploy the file to every instance and\n'
            + `restart them all. After the last restart, wait at least ${PUBLISH_WAIT}, then:\n`
            + promote.map((key) => `  talent-auth keys promote --file ${safe(file.path)} --kid ${safe(key.kid)}\n`).join('')
          : ''),
    );
  },
};

/** The key file as it will be once `jwks` is written. */
async function readAs(path: string, jwks: KeyFile['jwks']): Promise<KeyFile> {
  return { path, jwks, states: await keyStates(jwks.keys) };
}

const keysPromote: Command = {
  options: ['file', 'kid', 'store', 'force'],
  operands: [],
  async run(context) {
    const command = 'keys promote';
    const kid = required(context.args.values.kid, 'kid', command);
    if (keysInStore(context, command)) return promoteStored(storedKeysContext(context), kid, context.args.values.force === true);
    if (context.args.values.force === true) throw new UsageError(`${command}: --force is for --store (a file has no waits to skip)`, '--force');
    const file = await keyFile(context, command);
    const status = file.states.find((state) => state.kid === kid);
    if (!status) throw new NotFound(`key ${kid} in ${file.path}`);
    const jwk = file.jwks.keys[status.index]!;
    if (!status.alg) {
      throw new UsageError(`keys promote: key ${kid} signs none of ${SIGNING_ALGORITHMS.join(', ')} (alg ${jwk.alg ?? 'unset'}, use ${jwk.use ?? 'unset'}); it can only be published`, '--kid');
    }
    const current = file.states.find((state) => state.alg === status.alg && state.state === 'signing')!;
    let next = file;
    if (current.index !== status.index) {
      await keyEvent(context, 'signing_key.promoted', kid, status.alg);
      // Move the key just before the current signing key of its algorithm: it becomes the first.
      const keys = file.jwks.keys.filter((_key, index) => index !== status.index);
      keys.splice(current.index, 0, jwk);
      const jwks = { ...file.jwks, keys };
      next = await readAs(file.path, jwks);
      writeJwksFile(file.path, jwks, true, '--file');
    }
    const changed = current.index !== status.index;
    out(
      context,
      { file: file.path, kid, alg: status.alg, previous_kid: current.kid, changed, keys: summaries(next) },
      changed
        ? `Key ${safe(kid)} now signs ${status.alg} in ${safe(file.path)}; the previous signing key ${safe(current.kid)} stays published.\n`
          + 'Each instance signs with it from its next restart. Next: deploy the file to every instance and\n'
          + `restart them all. After the last restart, wait at least ${SWITCH_WAIT}, then:\n`
          + `  talent-auth keys retire --file ${safe(file.path)} --kid ${safe(current.kid)}\n`
        : `Key ${safe(kid)} already signs ${status.alg} in ${safe(file.path)}; nothing changed.\n`,
    );
  },
};

const keysRetire: Command = {
  options: ['file', 'kid', 'store', 'force'],
  operands: [],
  async run(context) {
    const command = 'keys retire';
    const kid = required(context.args.values.kid, 'kid', command);
    if (keysInStore(context, command)) return retireStored(storedKeysContext(context), kid, context.args.values.force === true);
    if (context.args.values.force === true) throw new UsageError(`${command}: --force is for --store (a file has no waits to skip)`, '--force');
    const file = await keyFile(context, command);
    const status = file.states.find((state) => state.kid === kid);
    if (!status) throw new NotFound(`key ${kid} in ${file.path}`);
    if (status.state === 'signing') {
      const others = file.states.filter((state) => state.alg === status.alg).length - 1;
      throw new UsageError(
        `keys retire: key ${kid} is the signing ${status.alg} key${others === 0 ? ` (the only ${status.alg} key)` : ''}; `
          + `${others === 0 ? `add another ${status.alg} key (keys add), ` : ''}promote another ${status.alg} key first and retire this one after the wait (see talent-auth keys retire --help)`,
        '--kid',
      );
    }
    await keyEvent(context, 'signing_key.retired', kid, status.alg);
    const jwks = { ...file.jwks, keys: file.jwks.keys.filter((_key, index) => index !== status.index) };
    const next = await readAs(file.path, jwks);
    writeJwksFile(file.path, jwks, true, '--file');
    const retired = keySummary(file.jwks.keys[status.index]!, status);
    out(
      context,
      { file: file.path, kid, ...(retired.alg ? { alg: retired.alg } : {}), retired: true, keys: summaries(next) },
      `Removed key ${safe(kid)} (${safe(retired.alg ?? '-')}, published) from ${safe(file.path)}.\n`
        + 'Deploy the file to every instance and restart them all: they stop publishing it. This is safe\n'
        + 'once the tokens it signed have expired: wait at least the longest token lifetime plus clock skew\n'
        + 'after the last instance stopped signing with it (talent-auth keys promote --help).\n',
    );
  },
};

const auditList: Command = {
  options: ['tenant', 'platform', 'type', 'since', 'until', 'limit', 'cursor'],
  operands: [],
  async run(context) {
    const { values } = context.args;
    if ((values.tenant === undefined) === (values.platform !== true)) {
      throw new UsageError('audit list: give --tenant <id> (a tenant\'s events) or --platform (events of no tenant)', '--tenant');
    }
    if (values.limit !== undefined && !/^\d+$/.test(values.limit)) throw new UsageError('audit list: --limit must be a number (1..200)', '--limit');
    const page = await (await auditTrail(context)).list({
      tenant: values.tenant ?? null,
      ...(values.type !== undefined ? { type: values.type as AuditEventType } : {}),
      ...(values.since !== undefined ? { since: values.since } : {}),
      ...(values.until !== undefined ? { until: values.until } : {}),
      ...(values.limit !== undefined ? { limit: Number(values.limit) } : {}),
      ...(values.cursor !== undefined ? { cursor: values.cursor } : {}),
    });
    const who = (event: (typeof page.events)[number]) => `${event.actor.type}${event.actor.id ? `:${event.actor.id}` : ''}`;
    out(
      context,
      { events: page.events, ...(page.next ? { next: page.next } : {}) },
      table(['TIME', 'TYPE', 'ACTOR', 'TARGET', 'ADDRESS'], page.events.map((event) => [
        event.time, event.type, safe(who(event)), safe(event.target ? `${event.target.type}:${event.target.id}` : '-'), safe(event.address ?? '-'),
      ])) + (page.next ? `More: talent-auth audit list ${values.tenant !== undefined ? `--tenant ${safe(values.tenant)}` : '--platform'} --cursor ${page.next}\n` : ''),
    );
  },
};

const signInsUnlock: Command = {
  options: ['username', 'cookie-key', 'tenant', 'actor'],
  operands: [],
  async run(context) {
    const { values } = context.args;
    const command = 'sign-ins unlock';
    const username = required(values.username, 'username', command);
    const by = operatorContext(values.actor);
    // The hints are keyed by the server's first cookie key: the same COOKIE_KEYS as the server's.
    const cookieKey = values['cookie-key'] ?? context.io.env.COOKIE_KEYS?.split(',').find(Boolean);
    if (!cookieKey) {
      throw new UsageError(`${command}: needs the server's first cookie key to find the user's counters: set COOKIE_KEYS as for the server, or give --cookie-key`, '--cookie-key');
    }
    const store = await context.store();
    // The CLI has no AccountStore: the operator's unlock, of any username, recorded with its hint
    // (in the trail of the tenant she names, taken as stated).
    const holds = new SignInHolds(store.counters, [cookieKey], undefined, await auditTrail(context), true);
    const { unlocked } = await holds.unlock({ username, ...(values.tenant !== undefined ? { tenant: values.tenant } : {}) }, by);
    out(
      context,
      { unlocked },
      unlocked
        ? 'Unlocked: the failed sign-ins counted for that username are cleared; the user can sign in again.\n'
        : 'Nothing to unlock: no failed sign-ins are counted for that username (check that the cookie key is the server\'s first).\n',
    );
  },
};

/**
 * The factors of the store. Listing and resetting neither seal nor open a secret: no factor keys
 * are needed (none is given), and what the CLI does is exactly what the server's Factors does.
 */
async function factors(context: CommandContext): Promise<Factors> {
  return new Factors((await context.store()).records, { keys: [], issuerName: '' }, await auditTrail(context));
}

/** `--tenant` and `--sub`, both required. */
function factorOwner(context: CommandContext, command: string): { tenant: string; sub: string } {
  const { values } = context.args;
  return { tenant: required(values.tenant, 'tenant', command), sub: required(values.sub, 'sub', command) };
}

const FACTOR_NAMES = { passkey: 'passkey', totp: 'authenticator app', recovery_codes: 'recovery codes' } as const;

const factorsList: Command = {
  options: ['tenant', 'sub'],
  operands: [],
  async run(context) {
    const owner = factorOwner(context, 'factors list');
    const service = await factors(context);
    const [listed, summary] = await Promise.all([service.list(owner), service.summary(owner)]);
    const who = `user ${safe(owner.sub)} of tenant ${safe(owner.tenant)}`;
    const human = (listed.length === 0
      ? `No second factors for ${who}.\n`
      : table(['ID', 'TYPE', 'LABEL', 'CREATED_AT'], listed.map((factor) => [
        safe(factor.id), FACTOR_NAMES[factor.type], safe(factor.label ?? '-'), factor.createdAt,
      ])))
      + (summary.resetRequested ? 'A reset was asked for: she enrols anew at her next sign-in.\n' : '');
    out(context, { tenant: owner.tenant, sub: owner.sub, ...userFactorsWire(listed, summary.resetRequested) }, human);
  },
};

const factorsReset: Command = {
  options: ['tenant', 'sub', 'actor'],
  operands: [],
  async run(context) {
    const owner = factorOwner(context, 'factors reset');
    const by = operatorContext(context.args.values.actor);
    const reset = await (await factors(context)).reset(owner, by);
    const who = `user ${safe(owner.sub)} of tenant ${safe(owner.tenant)}`;
    out(
      context,
      { tenant: owner.tenant, sub: owner.sub, reset },
      reset
        ? `Reset: every second factor of ${who} is removed (passkeys, authenticator app, recovery codes).\n`
          + 'Her next sign-in asks for the password alone (where a factor is required, she enrols one right after).\n'
        : `Nothing to reset: ${who} holds no second factor.\n`,
    );
  },
};

export const COMMANDS: Record<string, Command> = {
  'clients create': clientsCreate,
  'clients list': clientsList,
  'clients update': clientsUpdate,
  'clients rotate-secret': clientsRotateSecret,
  'clients delete': clientsDelete,
  'apps create': appsCreate,
  'apps list': appsList,
  'apps update': appsUpdate,
  'apps rotate-secret': appsRotateSecret,
  'apps delete': appsDelete,
  'keys generate': keysGenerate,
  'keys list': keysList,
  'keys add': keysAdd,
  'keys promote': keysPromote,
  'keys retire': keysRetire,
  'audit list': auditList,
  'sign-ins unlock': signInsUnlock,
  'factors list': factorsList,
  'factors reset': factorsReset,
};
