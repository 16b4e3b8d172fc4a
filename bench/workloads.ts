/**
 * The token requests of each workload, as autocannon options. Codes are single-use and refresh
 * tokens rotate, so those two workloads draw a fresh value per request from a pool; a rotated
 * refresh token goes back into the pool for a later request.
 */
import type autocannon from 'autocannon';
import type { ClientCredentials, MintedCode, ServerTarget } from './protocol.js';

export const WORKLOADS = ['client-credentials', 'code-exchange', 'refresh'] as const;
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

export interface Pools {
  codes: Pool<MintedCode>;
  refreshTokens: Pool<string>;
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

/** A value no server knows: sent only if a pool ran dry, it is answered 400 and counted as an error. */
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
    url: target.tokenUrl,
    connections: settings.connections,
    duration: settings.seconds,
    // Latency percentiles of 2xx responses only; histograms are merged by the parent.
    excludeErrorStats: true,
    skipAggregateResult: true,
  };
  const path = new URL(target.tokenUrl).pathname;
  switch (workload) {
    case 'client-credentials':
      return { ...common, method: 'POST', headers: basicHeaders(target.service), body: CLIENT_CREDENTIALS_BODY };
    case 'code-exchange':
      return {
        ...common,
        // The run ends early, rather than sending spent codes, if the supply runs out.
        maxOverallRequests: poolBudget(pools.codes.size, settings.connections),
        requests: [
          {
            method: 'POST',
            path,
            headers: basicHeaders(target.app),
            setupRequest: (request) => {
              const code = pools.codes.take() ?? { code: SPENT, verifier: SPENT };
              return { ...request, body: codeExchangeBody(target, code) };
            },
            onResponse: harvest(pools),
          },
        ],
      };
    case 'refresh':
      return {
        ...common,
        requests: [
          {
            method: 'POST',
            path,
            headers: basicHeaders(target.app),
            setupRequest: (request) => ({ ...request, body: refreshBody(pools.refreshTokens.take() ?? SPENT) }),
            onResponse: harvest(pools),
          },
        ],
      };
  }
}
