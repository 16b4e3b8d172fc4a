import { resolve } from 'node:path';
import type { Store } from '../../adapters/types.js';
import { ApiCatalog } from '../catalog.js';
import { NotFound } from '../errors.js';
import { AppRegistrations, type ClientType, type EngineCheck } from '../records/app-registrations.js';
import { ClientConfigurations } from '../records/client-configurations.js';
import { parseResources, required, type OptionName, type ParsedArgs } from './args.js';
import { loadApiCatalog } from './apis.js';
import { generateJwks, parseAlgorithms, writeJwksFile } from './keys.js';
import { appWire, clientWire, json, resourcesInWords, safe, SECRET_NOTE, table, type CliIo } from './output.js';

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

/** ClientConfigurations needs the catalog only to validate resources: create (and update) read it. */
async function clientConfigurations(context: CommandContext, needsCatalog: boolean): Promise<ClientConfigurations> {
  const { args, io } = context;
  const catalog = needsCatalog ? loadApiCatalog(args.values.apis ?? io.env.TALENT_AUTH_APIS, io.cwd) : new ApiCatalog([]);
  return new ClientConfigurations((await context.store()).records, catalog);
}

async function appRegistrations(context: CommandContext): Promise<AppRegistrations> {
  return new AppRegistrations((await context.store()).records, ownPoliciesOnly);
}

function out(context: CommandContext, machine: unknown, human: string): void {
  context.io.stdout(context.json ? json(machine) : human);
}

const clientsCreate: Command = {
  options: ['tenant', 'name', 'category', 'description', 'resource', 'constraint'],
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
    };
    const service = await clientConfigurations(context, true);
    const created = await service.create(input);
    out(
      context,
      clientWire(created),
      `Created client configuration "${safe(created.name)}" in tenant ${safe(created.tenant)}.\n`
        + `  client_id:     ${created.clientId}\n`
        + `  client_secret: ${created.clientSecret}\n`
        + `  resources:     ${safe(resourcesInWords(created.resources))}\n`
        + `${SECRET_NOTE}\n`,
    );
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

const appsCreate: Command = {
  options: ['name', 'description', 'redirect-uri', 'type', 'no-pkce', 'first-party'],
  operands: [],
  async run(context) {
    const { values } = context.args;
    const command = 'apps create';
    if (!values['redirect-uri']?.length) required(undefined, 'redirect-uri', command);
    const input = {
      name: required(values.name, 'name', command),
      ...(values.description !== undefined ? { description: values.description } : {}),
      redirectUris: values['redirect-uri'] ?? [],
      clientType: required(values.type, 'type', command) as ClientType,
      ...(values['no-pkce'] ? { pkceEnabled: false } : {}),
      ...(values['first-party'] ? { firstParty: true } : {}),
    };
    const created = await (await appRegistrations(context)).create(input);
    const lines = [
      `Registered ${created.clientType} app "${safe(created.name)}".`,
      `  client_id:     ${created.clientId}`,
      ...(created.clientSecret ? [`  client_secret: ${created.clientSecret}`] : []),
      `  redirect_uris: ${safe(created.redirectUris.join(' '))}`,
      `  pkce_enabled:  ${created.pkceEnabled}`,
      ...(created.firstParty ? ['  first_party:   true'] : []),
      ...(created.clientSecret ? [SECRET_NOTE] : []),
    ];
    out(context, appWire(created), `${lines.join('\n')}\n`);
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

export const COMMANDS: Record<string, Command> = {
  'clients create': clientsCreate,
  'clients list': clientsList,
  'clients rotate-secret': clientsRotateSecret,
  'clients delete': clientsDelete,
  'apps create': appsCreate,
  'apps list': appsList,
  'apps rotate-secret': appsRotateSecret,
  'apps delete': appsDelete,
  'keys generate': keysGenerate,
};
