/*
 * The Redis store's settings as a process finds them: in its environment, in a JSON file holding
 * the `store` option, or in single values such as command-line flags. The example server reads the
 * environment with this module and the CLI reads all three, so that one set of settings reaches
 * the same store from both. The sources are merged in the order given and the result is checked
 * once, with the `store` option's own schema (options.ts). Messages name the variable, flag or file
 * field that is wrong, never its value: a URL or a setting may hold a password.
 */
import { readFileSync } from 'node:fs';
import { redisStoreSchema, type RedisStoreOption } from './options.js';

/**
 * A setting that is missing, malformed or in conflict. `field` names the variable, flag or field
 * (in a file: its path in the object, e.g. `cluster.nodes.0`; the message names the file too).
 */
export class RedisSettingsError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'RedisSettingsError';
  }
}

/**
 * One source of settings: what it says (the `store` option's fields, not yet checked), the name of
 * a field in messages (`REDIS_URL`, `--redis`, `cluster.nodes.0`) and, for a file, its name
 * (messages then say `store.json: cluster.nodes.0`).
 */
export interface RedisSettingsSource {
  settings: Readonly<Record<string, unknown>>;
  nameOf(path: readonly PropertyKey[]): string;
  label?: string;
}

/** A field as messages name it: with its file's name, if it comes from a file. */
function fullName(source: RedisSettingsSource, path: readonly PropertyKey[]): string {
  return source.label === undefined ? source.nameOf(path) : `${source.label}: ${source.nameOf(path)}`;
}

/** The three ways to say where Redis is; a source names at most one. */
const LOCATIONS = ['url', 'cluster', 'sentinel'] as const;

/** What the example server and the CLI read, each with the `store` field it sets. */
export const REDIS_ENVIRONMENT = {
  REDIS_URL: 'url',
  REDIS_CLUSTER_NODES: 'cluster.nodes (comma-separated redis:// or rediss:// URLs)',
  REDIS_SENTINELS: 'sentinel.sentinels (comma-separated host:port, port 26379 by default)',
  REDIS_SENTINEL_NAME: 'sentinel.name (default mymaster)',
  REDIS_SENTINEL_USERNAME: 'sentinel.username',
  REDIS_SENTINEL_PASSWORD: 'sentinel.password',
  REDIS_USERNAME: 'username (the ACL user)',
  REDIS_PASSWORD: 'password',
  REDIS_TLS: 'tls: true (1 or true)',
  REDIS_TLS_CA_FILE: 'tls.ca (a PEM file)',
  REDIS_TLS_CERT_FILE: 'tls.cert (a PEM file)',
  REDIS_TLS_KEY_FILE: 'tls.key (a PEM file)',
  REDIS_KEY_PREFIX: 'keyPrefix',
} as const;

type RedisVariable = keyof typeof REDIS_ENVIRONMENT;

/** The variables that say where Redis is: a process given none of them has no Redis store from its environment. */
export const REDIS_LOCATION_VARIABLES: readonly RedisVariable[] = ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'];
type Environment = Readonly<Record<string, string | undefined>>;

/** The variable that set a field of the environment's settings. */
function variableOf(path: readonly PropertyKey[]): RedisVariable {
  const [top, inner] = path;
  if (top === 'cluster') return 'REDIS_CLUSTER_NODES';
  if (top === 'sentinel') {
    if (inner === 'name') return 'REDIS_SENTINEL_NAME';
    if (inner === 'username') return 'REDIS_SENTINEL_USERNAME';
    if (inner === 'password') return 'REDIS_SENTINEL_PASSWORD';
    return 'REDIS_SENTINELS';
  }
  if (top === 'tls') {
    if (inner === 'ca') return 'REDIS_TLS_CA_FILE';
    if (inner === 'cert') return 'REDIS_TLS_CERT_FILE';
    if (inner === 'key') return 'REDIS_TLS_KEY_FILE';
    return 'REDIS_TLS';
  }
  if (top === 'username') return 'REDIS_USERNAME';
  if (top === 'password') return 'REDIS_PASSWORD';
  if (top === 'keyPrefix') return 'REDIS_KEY_PREFIX';
  return 'REDIS_URL';
}

/** A comma-separated list, blanks dropped. */
const listOf = (value: string): string[] => value.split(',').map((entry) => entry.trim()).filter(Boolean);

/** A PEM file named by a variable, read now; a file that cannot be read is named with the reason. */
function pemFile(variable: RedisVariable, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new RedisSettingsError(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, variable);
  }
}

/**
 * The settings the environment gives (REDIS_ENVIRONMENT), unchecked but for the forms only a variable
 * has (a sentinel list, a yes/no, a file to read). Empty when it names no Redis setting.
 */
export function redisSettingsFromEnv(env: Environment): RedisSettingsSource {
  const given = (name: RedisVariable): string | undefined => (env[name] === '' ? undefined : env[name]);
  const settings: Record<string, unknown> = {};
  const url = given('REDIS_URL');
  if (url !== undefined) settings.url = url;
  const nodes = given('REDIS_CLUSTER_NODES');
  if (nodes !== undefined) settings.cluster = { nodes: listOf(nodes) };
  const sentinels = given('REDIS_SENTINELS');
  if (sentinels !== undefined) {
    settings.sentinel = {
      sentinels: listOf(sentinels).map((entry, index) => {
        const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(entry);
        if (!match) throw new RedisSettingsError(`REDIS_SENTINELS: entry ${index + 1} is not host:port`, 'REDIS_SENTINELS');
        return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port: Number(match[2] ?? 26379) };
      }),
      name: given('REDIS_SENTINEL_NAME') ?? 'mymaster',
      ...(given('REDIS_SENTINEL_USERNAME') !== undefined ? { username: given('REDIS_SENTINEL_USERNAME') } : {}),
      ...(given('REDIS_SENTINEL_PASSWORD') !== undefined ? { password: given('REDIS_SENTINEL_PASSWORD') } : {}),
    };
  }
  const username = given('REDIS_USERNAME');
  if (username !== undefined) settings.username = username;
  const password = given('REDIS_PASSWORD');
  if (password !== undefined) settings.password = password;
  const tls = given('REDIS_TLS');
  if (tls !== undefined && !/^(1|true|0|false)$/i.test(tls)) throw new RedisSettingsError('REDIS_TLS: must be 1, true, 0 or false', 'REDIS_TLS');
  const pems = (['REDIS_TLS_CA_FILE', 'REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE'] as const).flatMap((variable) => {
    const path = given(variable);
    return path === undefined ? [] : [[variable.replace(/^REDIS_TLS_(\w+)_FILE$/, '$1').toLowerCase(), pemFile(variable, path)] as const];
  });
  // A certificate file means TLS: REDIS_TLS need not be said as well.
  if (pems.length > 0) settings.tls = Object.fromEntries(pems);
  else if (tls !== undefined && /^(1|true)$/i.test(tls)) settings.tls = true;
  const keyPrefix = given('REDIS_KEY_PREFIX');
  if (keyPrefix !== undefined) settings.keyPrefix = keyPrefix;
  return { settings, nameOf: variableOf };
}

/**
 * Where JSON.parse found `text` invalid, as ` (line L, column C)` (empty when it does not say).
 * JSON.parse's own message quotes the text around the fault: a file's secret could be in it, so
 * only the position is kept.
 */
export function jsonFaultAt(text: string, error: unknown): string {
  const position = /position (\d+)/.exec((error as Error).message)?.[1];
  const before = position === undefined ? undefined : text.slice(0, Number(position)).split('\n');
  return before ? ` (line ${before.length}, column ${before.at(-1)!.length + 1})` : '';
}

/**
 * The settings of a JSON file holding the `store` option (`type` may be left out). A file that
 * cannot be read, is not JSON or not an object is refused here, naming the line and column (never
 * quoting the text: it may hold a password); its fields are checked when the sources are merged.
 * @param shownAs how messages name the file (the path as given).
 * @param field the `field` of an error about the file as a whole (e.g. the flag that named it).
 */
export function redisSettingsFromFile(path: string, shownAs: string, field = shownAs): RedisSettingsSource {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RedisSettingsError(`${shownAs}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, field);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new RedisSettingsError(`${shownAs}: not valid JSON${jsonFaultAt(text, error)}`, field);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new RedisSettingsError(`${shownAs}: must hold a JSON object, the store option ({"url": ...}, {"cluster": ...} or {"sentinel": ...})`, field);
  }
  return {
    settings: parsed as Record<string, unknown>,
    nameOf: (fieldPath) => (fieldPath.length > 0 ? fieldPath.map(String).join('.') : '(the object)'),
    label: shownAs,
  };
}

/**
 * The `store` option the sources give together, checked. Where Redis is (url, cluster or sentinel,
 * the sentinel's own credentials with it) comes whole from the first source that names it; a source
 * naming two is refused. Every other field comes from the first source that has it. The result is
 * checked with the option's schema; an error names the field as its source calls it.
 * @param sources highest precedence first.
 * @param none the message when no source names where Redis is.
 * @throws RedisSettingsError (with the message `none` when no source names where Redis is).
 */
export function resolveRedisStore(sources: readonly RedisSettingsSource[], none: string): RedisStoreOption {
  const merged: Record<string, unknown> = { type: 'redis' };
  const origin = new Map<string, RedisSettingsSource>();
  let located = false;
  for (const source of sources) {
    const named = LOCATIONS.filter((location) => source.settings[location] !== undefined);
    if (named.length > 1) {
      const names = named.map((location) => source.nameOf([location])).join(' and ');
      throw new RedisSettingsError(
        `${source.label === undefined ? '' : `${source.label}: `}${names} both say where Redis is: give only one (a URL, cluster nodes or sentinels)`,
        source.nameOf([named[0]!]),
      );
    }
    for (const [field, value] of Object.entries(source.settings)) {
      // JSON.parse keeps "__proto__" as a member: assigned below, it would replace the prototype
      // of the merged settings, whose inherited members the schema would then read.
      if (field === '__proto__') throw new RedisSettingsError(`${source.label === undefined ? '' : `${source.label}: `}__proto__ is not a store setting`, source.nameOf([field]));
      if (value === undefined || (LOCATIONS as readonly string[]).includes(field)) continue;
      if (!origin.has(field)) {
        merged[field] = value;
        origin.set(field, source);
      }
    }
    if (!located && named.length === 1) {
      merged[named[0]!] = source.settings[named[0]!];
      origin.set(named[0]!, source);
      located = true;
    }
  }
  if (!located) throw new RedisSettingsError(none, sources[0]?.nameOf(['url']) ?? 'url');
  const checked = redisStoreSchema.safeParse(merged);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    // An unknown field is reported at the object that holds it, with the key in `keys`.
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const path = keys.length > 0 ? [...issue.path, keys[0]!] : issue.path;
    const source = origin.get(String(path[0])) ?? sources[0]!;
    throw new RedisSettingsError(
      `${fullName(source, path)}: ${keys.length > 0 ? 'not a setting of the Redis store' : issue.message}`,
      source.nameOf(path),
    );
  }
  return checked.data as RedisStoreOption;
}

/**
 * The Redis store the environment names (REDIS_ENVIRONMENT), or undefined when it names none.
 * @throws RedisSettingsError naming the variable that is wrong.
 */
export function redisStoreFromEnv(env: Environment): RedisStoreOption | undefined {
  if (!REDIS_LOCATION_VARIABLES.some((name) => env[name])) return undefined;
  return resolveRedisStore([redisSettingsFromEnv(env)], `one of ${REDIS_LOCATION_VARIABLES.join(', ')} is required`);
}
