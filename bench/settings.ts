/** The bench's knobs, from the environment (see the header of bench/run.ts). */
import { ALGORITHMS, ID_TOKEN_ALGORITHMS, parseAlgorithm, parseIdTokenAlgorithm, type Algorithm, type IdTokenAlgorithm } from './protocol.js';

/** `client-auth` (private_key_jwt and DPoP against Basic and Bearer) is not part of `all`: it adds about 3 minutes. */
export const MODES = ['all', 'client-credentials', 'named-user', 'lifecycle', 'client-auth', 'soak'] as const;
export type Mode = (typeof MODES)[number];

/** Where our side keeps its store: one redis-server, or a local Redis Cluster of 3 masters. */
export const STORES = ['redis', 'cluster'] as const;
export type StoreKind = (typeof STORES)[number];

export interface Settings {
  mode: Mode;
  /** BENCH_STORE: our side's store (the bare engine keeps its memory adapter either way). */
  store: StoreKind;
  /** client_credentials access-token algorithms. */
  algorithms: Algorithm[];
  /** The named-user workloads' ID-token algorithms: each is measured with an app registered with it. */
  idTokenAlgorithms: IdTokenAlgorithm[];
  /** Server process counts for client_credentials, and for the named-user flows and lifecycle endpoints. */
  processes: number[];
  namedUserProcesses: number[];
  /** Server process counts for the client-authentication workloads (BENCH_MODE=client-auth). */
  clientAuthProcesses: number[];
  /** Connections per server process. */
  connections: number;
  warmupSeconds: number;
  seconds: number;
  rounds: number;
  /** BENCH_CPU_PROF: write CPU profiles there instead of measuring. */
  profileDir: string | undefined;
  /** The soak (all, soak): named-user flows on one grant, then the timed soak's length. */
  soakFlows: number;
  soakSeconds: number;
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function list<T>(name: string, fallback: T[], parse: (item: string) => T): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const items = raw.split(',').map((item) => parse(item.trim()));
  return [...new Set(items)];
}

function processCount(name: string) {
  return (item: string): number => {
    const value = Number(item);
    if (!Number.isInteger(value) || value < 1 || value > 16) throw new Error(`${name}: "${item}" is not a process count (1..16)`);
    return value;
  };
}

function mode(): Mode {
  const raw = process.env.BENCH_MODE || 'all';
  const found = MODES.find((candidate) => candidate === raw);
  if (!found) throw new Error(`BENCH_MODE must be one of ${MODES.join(', ')}, got "${raw}"`);
  return found;
}

function store(): StoreKind {
  const raw = process.env.BENCH_STORE || 'redis';
  const found = STORES.find((candidate) => candidate === raw);
  if (!found) throw new Error(`BENCH_STORE must be one of ${STORES.join(', ')}, got "${raw}"`);
  return found;
}

export function readSettings(): Settings {
  return {
    mode: mode(),
    store: store(),
    algorithms: list<Algorithm>('BENCH_ALGS', ['ES256'], parseAlgorithm).sort(
      (a, b) => ALGORITHMS.indexOf(a) - ALGORITHMS.indexOf(b),
    ),
    idTokenAlgorithms: list<IdTokenAlgorithm>('BENCH_ID_TOKEN_ALGS', [...ID_TOKEN_ALGORITHMS], parseIdTokenAlgorithm).sort(
      (a, b) => ID_TOKEN_ALGORITHMS.indexOf(a) - ID_TOKEN_ALGORITHMS.indexOf(b),
    ),
    processes: list('BENCH_PROCESSES', [1, 2], processCount('BENCH_PROCESSES')).sort((a, b) => a - b),
    namedUserProcesses: list('BENCH_NAMED_USER_PROCESSES', [1], processCount('BENCH_NAMED_USER_PROCESSES')).sort((a, b) => a - b),
    clientAuthProcesses: list('BENCH_CLIENT_AUTH_PROCESSES', [1], processCount('BENCH_CLIENT_AUTH_PROCESSES')).sort((a, b) => a - b),
    connections: positiveInteger('BENCH_CONNECTIONS', 32),
    warmupSeconds: positiveInteger('BENCH_WARMUP_SECONDS', 2),
    seconds: positiveInteger('BENCH_SECONDS', 6),
    rounds: positiveInteger('BENCH_ROUNDS', 3),
    profileDir: process.env.BENCH_CPU_PROF || undefined,
    soakFlows: positiveInteger('BENCH_SOAK_FLOWS', 2000),
    soakSeconds: positiveInteger('BENCH_SOAK_SECONDS', 600),
  };
}

const measures = (mode: Mode) => (settings: Settings) => settings.mode === 'all' || settings.mode === mode;
export const measuresClientCredentials = measures('client-credentials');
export const measuresNamedUser = measures('named-user');
/** Userinfo and introspection. */
export const measuresLifecycle = measures('lifecycle');
/** The soak (bench/soak.ts): part of `all`, and alone with `soak`. */
export const measuresSoak = measures('soak');
/** client_credentials with private_key_jwt and DPoP, and its Basic reference: asked for by name only. */
export const measuresClientAuth = (settings: Settings): boolean => settings.mode === 'client-auth';
