/**
 * The requests of each workload, as autocannon options. Codes are single-use and refresh tokens
 * rotate, so those two workloads draw a fresh value per request from a pool; a rotated refresh
 * token goes back into the pool for a later request. Userinfo and introspection take live access
 * tokens in turn from a pool filled before the run, and check each 200's answer (introspection
 * answers 200 `{"active":false}` for a token it does not honour).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type autocannon from 'autocannon';
import { CLIENT_ASSERTION_TYPE, type ClientSigner } from './client-signing.js';
import type { AppClient, ClientCredentials, IdTokenAlgorithm, MintedCode, ServerTarget } from './protocol.js';

/**
 * client_credentials with other client authentication (BENCH_MODE=client-auth): private_key_jwt
 * (a fresh assertion per request, the token a Bearer token), Basic with a DPoP proof per request
 * (the token bound to the key), and both at once. Their reference is `client-credentials` (Basic,
 * Bearer), measured in the same rounds.
 */
export const CLIENT_AUTH_WORKLOADS = ['client-credentials-pkjwt', 'client-credentials-dpop', 'client-credentials-pkjwt-dpop'] as const;
export type ClientAuthWorkload = (typeof CLIENT_AUTH_WORKLOADS)[number];

export const WORKLOADS = ['client-credentials', ...CLIENT_AUTH_WORKLOADS, 'code-exchange', 'refresh', 'userinfo', 'introspection'] as const;
export type Workload = (typeof WORKLOADS)[number];

export const isClientAuthWorkload = (workload: Workload): workload is ClientAuthWorkload =>
  (CLIENT_AUTH_WORKLOADS as readonly Workload[]).includes(workload);

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
  /** The codes of the app the next code exchange runs for (set before it). */
  codes: Pool<MintedCode>;
  /** Per ID-token algorithm: the refresh tokens of that algorithm's app. */
  refreshTokens: Record<IdTokenAlgorithm, Pool<string>>;
  accessTokens: RoundRobin<string>;
  /** 2xx answers of the current run that did not say what they should (see `answers`). */
  unexpected: number;
  /** Signs the client-authentication workloads' assertions and proofs (the bench client key). */
  signer?: ClientSigner;
  /** The server's latest DPoP-Nonce, put in the next proofs (RFC 9449 §8). */
  dpopNonce?: string;
}

export const CLIENT_CREDENTIALS_BODY = 'grant_type=client_credentials&scope=scim.read';

export function basicHeaders({ clientId, clientSecret }: ClientCredentials): Record<string, string> {
  const credentials = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`);
  return { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${credentials.toString('base64')}` };
}

/**
 * One client_credentials request of a client-authentication workload, signed now: a new assertion
 * and a new proof (fresh `jti`) every time, as a client library makes them.
 */
export function clientAuthRequest(
  workload: ClientAuthWorkload,
  target: ServerTarget,
  signer: ClientSigner,
  nonce: string | undefined,
): { headers: Record<string, string>; body: string } {
  const dpop = workload !== 'client-credentials-pkjwt';
  const withKey = workload !== 'client-credentials-dpop';
  const headers = withKey ? { 'content-type': 'application/x-www-form-urlencoded' } : basicHeaders(target.dpopService);
  const body = withKey
    ? `${CLIENT_CREDENTIALS_BODY}&client_id=${encodeURIComponent(target.keyService.clientId)}` +
      `&client_assertion_type=${encodeURIComponent(CLIENT_ASSERTION_TYPE)}` +
      `&client_assertion=${signer.assertion(target.keyService.clientId, target.tokenUrl)}`
    : CLIENT_CREDENTIALS_BODY;
  return { headers: dpop ? { ...headers, dpop: signer.proof('POST', target.tokenUrl, nonce) } : headers, body };
}

/** A code exchange of `app`'s code (default: the RS256 app's). */
export function codeExchangeBody(target: ServerTarget, code: MintedCode, app: AppClient = target.app): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code: code.code,
    redirect_uri: app.redirectUri,
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
  /** A token answer of the client-authentication workloads: an access token of the expected type. */
  token: (body: string, tokenType: 'bearer' | 'dpop') => {
    const parsed = parsedObject(body);
    return typeof parsed.access_token === 'string' && String(parsed.token_type).toLowerCase() === tokenType;
  },
  userinfo: (body: string) => typeof parsedObject(body).sub === 'string',
  introspection: (body: string) => {
    const parsed = parsedObject(body);
    return parsed.active === true && typeof parsed.sub === 'string';
  },
};

/** Counts the 200s whose body is not what `expected` wants. */
function check(pools: Pools, expected: (body: string) => boolean) {
  return (status: number, body: string) => {
    if (status === 200 && !expected(body)) pools.unexpected += 1;
  };
}

/** A value no server knows: sent only if a pool ran dry, it is refused and counted as an error. */
const SPENT = 'pool-ran-dry';

/** Keeps the refresh token of a successful code exchange or rotation for a later refresh request. */
function harvest(refreshTokens: Pool<string>) {
  return (status: number, body: string) => {
    if (status !== 200) return;
    const token = (JSON.parse(body) as { refresh_token?: unknown }).refresh_token;
    if (typeof token === 'string') refreshTokens.push(token);
  };
}

/** Keeps the server's latest DPoP nonce; counts a 200 that is not a token of the expected type. */
function tokenAnswer(pools: Pools, tokenType: 'bearer' | 'dpop') {
  return (status: number, body: string, _context: object, headers: IncomingHttpHeaders | undefined) => {
    const nonce = headers?.['dpop-nonce'];
    if (typeof nonce === 'string') pools.dpopNonce = nonce;
    if (status === 200 && !answers.token(body, tokenType)) pools.unexpected += 1;
  };
}

/** Connections beyond the pool's last value may each build one request that is never sent. */
function poolBudget(size: number, connections: number): number {
  return Math.max(connections, size - connections);
}

/** `settings.idTokenAlg`: the app (one per ID-token algorithm) of the code exchange and refresh workloads. */
export function loadOptions(
  workload: Workload,
  target: ServerTarget,
  pools: Pools,
  settings: { connections: number; seconds: number; idTokenAlg: IdTokenAlgorithm },
): autocannon.Options {
  const app = target.apps[settings.idTokenAlg];
  const refreshTokens = pools.refreshTokens[settings.idTokenAlg];
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
    case 'client-credentials-pkjwt':
    case 'client-credentials-dpop':
    case 'client-credentials-pkjwt-dpop': {
      const { signer } = pools;
      if (!signer) throw new Error(`${workload} needs the client key (init)`);
      return each(target.tokenUrl, {
        method: 'POST',
        setupRequest: (request) => ({ ...request, ...clientAuthRequest(workload, target, signer, pools.dpopNonce) }),
        onResponse: tokenAnswer(pools, workload === 'client-credentials-pkjwt' ? 'bearer' : 'dpop'),
      });
    }
    case 'code-exchange':
      return {
        ...each(target.tokenUrl, {
          method: 'POST',
          headers: basicHeaders(app),
          setupRequest: (request) => {
            const code = pools.codes.take() ?? { code: SPENT, verifier: SPENT };
            return { ...request, body: codeExchangeBody(target, code, app) };
          },
          onResponse: harvest(refreshTokens),
        }),
        // The run ends early, rather than sending spent codes, if the supply runs out.
        maxOverallRequests: poolBudget(pools.codes.size, settings.connections),
      };
    case 'refresh':
      return each(target.tokenUrl, {
        method: 'POST',
        headers: basicHeaders(app),
        setupRequest: (request) => ({ ...request, body: refreshBody(refreshTokens.take() ?? SPENT) }),
        onResponse: harvest(refreshTokens),
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
