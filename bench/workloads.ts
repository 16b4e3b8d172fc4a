/**
 * The requests of each workload, as autocannon options. Codes are single-use and refresh tokens
 * rotate, so those two workloads draw a fresh value per request from a pool; a rotated refresh
 * token goes back into the pool for a later request. Userinfo and introspection take live access
 * tokens in turn from a pool filled before the run, and check each 200's answer (introspection
 * answers 200 `{"active":false}` for a token it does not honour).
 */
import type autocannon from 'autocannon';
import type { ClientCredentials, MintedCode, ServerTarget } from './protocol.js';

export const WORKLOADS = ['client-credentials', 'code-exchange', 'refresh', 'userinfo', 'introspection'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** FIFO with an index instead of Array#shift (which copies long arrays). */
export class Pool<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(value: T): void {
    this.items.push(value);
  }

  pushAll(values: readonly T[]): void {
    for (const value of values) this.items.push(value);
  }

  take(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const value = this.items[this.head]!;
    this.head += 1;
    if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return value;
  }
}

/** Hands out its values in turn, again and again (an access token is not spent by use). */
export class RoundRobin<T> {
  private next = 0;

  constructor(private readonly values: readonly T[] = []) {}

  get size(): number {
    return this.values.length;
  }

  take(): T | undefined {
    const value = this.values[this.next];
    this.next = (this.next + 1) % Math.max(1, this.values.length);
    return value;
  }
}

export interface Pools {
  codes: Pool<MintedCode>;
  refreshTokens: Pool<string>;
  accessTokens: RoundRobin<string>;
  /** 2xx answers of the current run that did not say what they should (see `answers`). */
  unexpected: number;
}

export const CLIENT_CREDENTIALS_BODY = 'grant_type=client_credentials&scope=scim.read';

export function basicHeaders({ clientId, clientSecret }: ClientCredentials): Record<string, string> {
  const credentials = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`);
  return { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${credentials.toString('base64')}` };
}

export function codeExchangeBody(target: ServerTarget, code: MintedCode): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code: code.code,
    redirect_uri: target.app.redirectUri,
    code_verifier: code.verifier,
  }).toString();
}

export function refreshBody(refreshToken: string): string {
  return `grant_type=refresh_token&refresh_token=${encodeURIComponent(refreshToken)}`;
}

export function introspectionBody(accessToken: string): string {
  return `token=${encodeURIComponent(accessToken)}`;
}

export const bearerHeaders = (accessToken: string): Record<string, string> => ({ authorization: `Bearer ${accessToken}` });

function parsedObject(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** What a 200 of userinfo and of introspection must say: the user's `sub`; an active token of hers. */
export const answers = {
  userinfo: (body: string) => typeof parsedObject(body).sub === 'string',
  introspection: (body: string) => {
    const parsed = parsedObject(body);
    return parsed.active === true && typeof parsed.sub === 'string';
  },
} satisfies Partial<Record<Workload, (body: string) => boolean>>;

/** Counts the 200s whose body is not what `expected` wants. */
function check(pools: Pools, expected: (body: string) => boolean) {
  return (status: number, body: string) => {
    if (status === 200 && !expected(body)) pools.unexpected += 1;
  };
}

/** A value no server knows: sent only if a pool ran dry, it is refused and counted as an error. */
const SPENT = 'pool-ran-dry';

/** Keeps the refresh token of a successful code exchange or rotation for a later refresh request. */
function harvest(pools: Pools) {
  return (status: number, body: string) => {
    if (status !== 200) return;
    const token = (JSON.parse(body) as { refresh_token?: unknown }).refresh_token;
    if (typeof token === 'string') pools.refreshTokens.push(token);
  };
}

/** Connections beyond the pool's last value may each build one request that is never sent. */
function poolBudget(size: number, connections: number): number {
  return Math.max(connections, size - connections);
}

export function loadOptions(
  workload: Workload,
  target: ServerTarget,
  pools: Pools,
  settings: { connections: number; seconds: number },
): autocannon.Options {
  const common = {
    connections: settings.connections,
    duration: settings.seconds,
    // Latency percentiles of 2xx responses only; histograms are merged by the parent.
    excludeErrorStats: true,
    skipAggregateResult: true,
  };
  /** The workload's one request to `url`, built anew for every send. */
  const each = (url: string, request: autocannon.Request): autocannon.Options => ({
    ...common,
    url,
    requests: [{ ...request, path: new URL(url).pathname }],
  });
  switch (workload) {
    case 'client-credentials':
      return { ...common, url: target.tokenUrl, method: 'POST', headers: basicHeaders(target.service), body: CLIENT_CREDENTIALS_BODY };
    case 'code-exchange':
      return {
        ...each(target.tokenUrl, {
          method: 'POST',
          headers: basicHeaders(target.app),
          setupRequest: (request) => {
            const code = pools.codes.take() ?? { code: SPENT, verifier: SPENT };
            return { ...request, body: codeExchangeBody(target, code) };
          },
          onResponse: harvest(pools),
        }),
        // The run ends early, rather than sending spent codes, if the supply runs out.
        maxOverallRequests: poolBudget(pools.codes.size, settings.connections),
      };
    case 'refresh':
      return each(target.tokenUrl, {
        method: 'POST',
        headers: basicHeaders(target.app),
        setupRequest: (request) => ({ ...request, body: refreshBody(pools.refreshTokens.take() ?? SPENT) }),
        onResponse: harvest(pools),
      });
    case 'userinfo':
      return each(target.userinfoUrl, {
        method: 'GET',
        setupRequest: (request) => ({ ...request, headers: bearerHeaders(pools.accessTokens.take() ?? SPENT) }),
        onResponse: check(pools, answers.userinfo),
      });
    case 'introspection':
      return each(target.introspectionUrl, {
        method: 'POST',
        headers: basicHeaders(target.app),
        setupRequest: (request) => ({ ...request, body: introspectionBody(pools.accessTokens.take() ?? SPENT) }),
        onResponse: check(pools, answers.introspection),
      });
  }
}
