import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Resources } from '../records/client-configurations.js';
import { UsageError } from './errors.js';

type OptionSpec = NonNullable<ParseArgsConfig['options']>[string];

/** Every flag of every command (one table, so that flags may come before or after the command). */
const OPTIONS = {
  // global
  redis: { type: 'string' },
  'store-config': { type: 'string' },
  'key-prefix': { type: 'string' },
  apis: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  // clients
  tenant: { type: 'string' },
  name: { type: 'string' },
  category: { type: 'string' },
  description: { type: 'string' },
  resource: { type: 'string', multiple: true },
  constraint: { type: 'string', multiple: true },
  // clients and apps: the security profile (policies/high-security.ts)
  profile: { type: 'string' },
  // apps
  'redirect-uri': { type: 'string', multiple: true },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  'backchannel-logout-uri': { type: 'string' },
  type: { type: 'string' },
  'no-pkce': { type: 'boolean' },
  'first-party': { type: 'boolean' },
  'resource-server': { type: 'boolean' },
  'all-tenants': { type: 'boolean' },
  // clients and apps: client authentication, DPoP, PAR (src/cli/client-authentication.ts)
  'auth-method': { type: 'string' },
  'jwks-file': { type: 'string' },
  'jwks-uri': { type: 'string' },
  dpop: { type: 'string' },
  'require-par': { type: 'boolean' },
  'no-require-par': { type: 'boolean' },
  // keys
  alg: { type: 'string', multiple: true },
  out: { type: 'string' },
  force: { type: 'boolean' },
  file: { type: 'string' },
  kid: { type: 'string' },
  store: { type: 'boolean' },
  // audit
  platform: { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  // sign-ins
  username: { type: 'string' },
  'cookie-key': { type: 'string' },
  actor: { type: 'string' },
  // factors
  sub: { type: 'string' },
  // connections (src/cli/connections.ts; --client-secret and --factor-key are known only to be refused, saying why)
  issuer: { type: 'string' },
  'client-id': { type: 'string' },
  domain: { type: 'string', multiple: true },
  scope: { type: 'string', multiple: true },
  claim: { type: 'string', multiple: true },
  'mfa-acr': { type: 'string', multiple: true },
  'token-endpoint-auth-method': { type: 'string' },
  'sign-out-upstream': { type: 'boolean' },
  'no-sign-out-upstream': { type: 'boolean' },
  'client-secret': { type: 'string' },
  'client-secret-stdin': { type: 'boolean' },
  'client-secret-env': { type: 'string' },
  'remove-client-secret': { type: 'boolean' },
  // Known only to be refused (the key would show in ps): the key comes from the environment.
  'factor-key': { type: 'string' },
  'factor-key-env': { type: 'string' },
  'base-url': { type: 'string' },
  // export and import (src/cli/backup.ts)
  consents: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  overwrite: { type: 'boolean' },
} as const satisfies Record<string, OptionSpec>;

export type OptionName = keyof typeof OPTIONS;

const GLOBAL_OPTIONS: readonly OptionName[] = ['redis', 'store-config', 'key-prefix', 'apis', 'json', 'help'];

export interface ParsedArgs {
  positionals: string[];
  values: {
    [K in OptionName]?: (typeof OPTIONS)[K] extends { multiple: true }
      ? string[]
      : (typeof OPTIONS)[K] extends { type: 'boolean' } ? boolean : string;
  };
  /** The flags given, as written (`--name`), in order. */
  given: OptionName[];
}

function isKnownFlag(token: string): boolean {
  const name = /^--([^=]+)/.exec(token)?.[1];
  return name !== undefined && Object.hasOwn(OPTIONS, name);
}

/**
 * `--kid -abc…` as `--kid=-abc…`: a value may start with '-' (a key id is base64url, one in 64
 * begins so), which node:util would take for a flag. Only a known flag is not a value.
 */
function attachDashValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index]!;
    const name = /^--([^=]+)$/.exec(token)?.[1];
    const next = argv[index + 1];
    const takesValue = name !== undefined && Object.hasOwn(OPTIONS, name) && OPTIONS[name as OptionName].type === 'string';
    if (takesValue && next !== undefined && next.startsWith('-') && !isKnownFlag(next) && next !== '-h') {
      out.push(`${token}=${next}`);
      index += 1;
    } else {
      out.push(token);
    }
  }
  return out;
}

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  try {
    const { values, positionals, tokens } = parseArgs({
      args: attachDashValues(argv),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    const given = tokens.flatMap((token) => (token.kind === 'option' ? [token.name as OptionName] : []));
    return { positionals, values: values as ParsedArgs['values'], given };
  } catch (error) {
    // node:util's messages name the flag: "Unknown option '--nmae'", "Option '--name <value>' argument missing".
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(message);
  }
}

/** Refuses flags that the command does not take (they would be silently ignored otherwise). */
export function allowOnly(args: ParsedArgs, command: string, allowed: readonly OptionName[]): void {
  for (const name of args.given) {
    if (!GLOBAL_OPTIONS.includes(name) && !allowed.includes(name)) {
      throw new UsageError(`${command} does not take --${name} (see talent-auth ${command} --help)`, `--${name}`);
    }
  }
}

export function required(value: string | undefined, flag: string, command: string): string {
  if (value === undefined) throw new UsageError(`${command}: --${flag} is required`, `--${flag}`);
  return value;
}

/** `<api>:<scope>[,<scope>...]` per `--resource`, and `<api>:<dimension>=<value>` per `--constraint`. */
export function parseResources(resourceFlags: readonly string[] = [], constraintFlags: readonly string[] = []): Resources {
  const resources: Resources = {};
  for (const flag of resourceFlags) {
    const colon = flag.indexOf(':');
    const apiId = flag.slice(0, colon).trim();
    if (colon <= 0 || !apiId) {
      throw new UsageError(`--resource "${flag}": expected <api>:<scope>[,<scope>...], e.g. scim:scim.read,scim.write`, '--resource');
    }
    const scopes = flag.slice(colon + 1).split(',').map((scope) => scope.trim()).filter(Boolean);
    const entry = (resources[apiId] ??= { scopes: [] });
    entry.scopes.push(...scopes.filter((scope) => !entry.scopes.includes(scope)));
  }
  for (const flag of constraintFlags) {
    const colon = flag.indexOf(':');
    const equals = flag.indexOf('=', colon + 1);
    const apiId = flag.slice(0, colon).trim();
    const dimension = flag.slice(colon + 1, equals).trim();
    if (colon <= 0 || equals < 0 || !apiId || !dimension) {
      throw new UsageError(`--constraint "${flag}": expected <api>:<dimension>=<value>, e.g. scim:group=engineering`, '--constraint');
    }
    const entry = resources[apiId];
    if (!entry) {
      throw new UsageError(`--constraint "${flag}": API "${apiId}" has no --resource ${apiId}:<scopes>`, '--constraint');
    }
    const values = ((entry.constraints ??= {})[dimension] ??= []);
    const value = flag.slice(equals + 1);
    if (!values.includes(value)) values.push(value);
  }
  return resources;
}
