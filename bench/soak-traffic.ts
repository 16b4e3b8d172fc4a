/**
 * The timed soak (BENCH_SOAK_SECONDS, part of BENCH_MODE=all and soak): a day of an HR app's
 * named-user traffic on two server processes of ours sharing one fresh redis-server, for a while,
 * then what Redis holds and how the latency tail went.
 *
 * Each of CONCURRENCY workers runs flows one after the other. A flow is one user's visit: the app
 * sends the browser to /authorize (PKCE S256) at one instance; the sign-in page (password), unless
 * the browser is still signed in there (a returning user on the same browser); the consent page if
 * shown (the first time only: a returning user's grant is reused); the code at the redirect. The
 * app then exchanges the code, sometimes at the other instance, and refreshes the rotated refresh
 * token a few times at either instance, a short pause between refreshes; at the end it revokes
 * the last refresh token, or abandons it to expire. A few sign-ins get a wrong password first.
 * Users are drawn from USERS with a skew, so some come back often and most now and then.
 *
 * Every answer is checked (a 2xx and what it must hold, or the page expected); anything else, a
 * 500, a timeout, is an error: counted per operation, the first few printed with status and error
 * code only (never a token, code or secret).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRedis, type RedisProcess } from '../devtools/redis-server.js';
import { BENCH_USERS, NAMED_USER_SCOPE } from './mint-codes.js';
import type { ServerTarget } from './protocol.js';
import type { ServerProcess } from './server-process.js';
import { sharedKeysEnvironment } from './shared-keys.js';
import { startServers } from './sides.js';
import { NoAnswer, SoakBrowser, atInstance, fetchWithin, textOf, type Page } from './soak-browser.js';
import { inventory, isKeptKind, usedMemory, type Inventory } from './soak-inventory.js';
import { SOAK_BASE_URL, SOAK_ENVIRONMENT, SOAK_PASSWORD } from './soak-users.js';

/** Flows under way at once: modest, the development machine has 2 cores. */
const CONCURRENCY = 8;
/** The users of the soak: the first 200 bench users. */
const USERS = BENCH_USERS.slice(0, 200);
const INSTANCES = 2;
const REQUEST_TIMEOUT_MS = 10_000;
/** A returning user comes back on the browser she used before (still signed in there) this often. */
const SAME_BROWSER = 0.7;
/** A sign-in with a wrong password first. */
const WRONG_PASSWORD_FIRST = 0.03;
/** The code exchanged at the other instance than the one that signed the user in. */
const OTHER_INSTANCE = 0.3;
/** Refreshes per flow: 0 to this, evenly. */
const MAX_REFRESHES = 6;
const REFRESH_PAUSE_MS = 1000;
/** The last refresh token revoked; the others are abandoned to expire. */
const REVOKED = 0.25;
/** Errors printed at the end (all are counted). */
const ERRORS_SHOWN = 5;

export const OPERATIONS = ['authorize', 'sign-in (wrong password)', 'sign-in', 'consent', 'code exchange', 'refresh', 'revoke'] as const;
type Operation = (typeof OPERATIONS)[number];

/** A step that did not get what it should: status (or timeout, network) and the OAuth error code, if any. */
class StepFailed extends Error {
  constructor(
    readonly operation: Operation,
    readonly status: string,
    readonly code: string,
  ) {
    super(`${operation}: ${status}${code ? ` ${code}` : ''}`);
  }
}

interface User {
  sub: string;
  busy: boolean;
  visits: number;
  browser: SoakBrowser | undefined;
}

interface Tally {
  flows: number;
  returning: number;
  stillSignedIn: number;
  consentShown: number;
  otherInstance: number;
  refreshes: number;
  revoked: number;
  abandoned: number;
  failedFlows: number;
}

const random = Math.random;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

class Traffic {
  readonly latencies = new Map<Operation, number[]>(OPERATIONS.map((operation) => [operation, []]));
  readonly errors = new Map<Operation, number>(OPERATIONS.map((operation) => [operation, 0]));
  readonly firstErrors: string[] = [];
  readonly tally: Tally = { flows: 0, returning: 0, stillSignedIn: 0, consentShown: 0, otherInstance: 0, refreshes: 0, revoked: 0, abandoned: 0, failedFlows: 0 };
  private readonly users: User[] = USERS.map((sub) => ({ sub, busy: false, visits: 0, browser: undefined }));
  private browsers = 0;

  constructor(
    private readonly targets: ServerTarget[],
    private readonly deadline: number,
  ) {}

  errorCount(): number {
    return [...this.errors.values()].reduce((sum, count) => sum + count, 0);
  }

  async worker(): Promise<void> {
    while (Date.now() < this.deadline) {
      const user = this.takeUser();
      try {
        await this.flow(user);
      } catch (error) {
        this.tally.failedFlows += 1;
        const failed = error instanceof StepFailed ? error : new StepFailed('authorize', 'exception', error instanceof Error ? error.name : 'unknown');
        this.errors.set(failed.operation, this.errors.get(failed.operation)! + 1);
        // Status and error code only: nothing of a request or an answer that could hold a credential.
        if (this.firstErrors.length < ERRORS_SHOWN) this.firstErrors.push(failed.message);
        // The browser may be half-way through a sign-in: the user's next visit starts afresh.
        user.browser = undefined;
      } finally {
        user.busy = false;
      }
    }
  }

  /** A user not in a flow, skewed towards the first: a few come back often, most now and then. */
  private takeUser(): User {
    const start = Math.floor(random() * random() * this.users.length);
    for (let offset = 0; ; offset += 1) {
      const user = this.users[(start + offset) % this.users.length]!;
      if (!user.busy) {
        user.busy = true;
        return user;
      }
    }
  }

  private newBrowser(): SoakBrowser {
    this.browsers += 1;
    const n = this.browsers;
    return new SoakBrowser(`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, REQUEST_TIMEOUT_MS);
  }

  /**
   * Runs a step and takes its latency, counted only once `check` accepted the answer (it throws a
   * StepFailed otherwise): the latencies are of successes, the errors are counted apart.
   */
  private async timed<T>(operation: Operation, step: () => Promise<T>, check: (result: T) => void): Promise<T> {
    const started = performance.now();
    let result: T;
    try {
      result = await step();
    } catch (error) {
      if (error instanceof NoAnswer) throw new StepFailed(operation, error.reason, '');
      // A page without the form it should have, a redirect loop: the name of the error only.
      throw new StepFailed(operation, 'exception', error instanceof Error ? error.message.replace(/[^\w ]/g, '').slice(0, 40) : 'unknown');
    }
    const took = performance.now() - started;
    check(result);
    this.latencies.get(operation)!.push(took);
    return result;
  }

  private async flow(user: User): Promise<void> {
    this.tally.flows += 1;
    if (user.visits > 0) this.tally.returning += 1;
    user.visits += 1;
    if (!user.browser || random() >= SAME_BROWSER) user.browser = this.newBrowser();
    const browser = user.browser;
    const signIn = pick(this.targets);
    const issuer = signIn.tokenUrl.replace(/\/token$/, '');
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code', client_id: signIn.app.clientId, redirect_uri: signIn.app.redirectUri, scope: NAMED_USER_SCOPE,
      state, nonce: randomBytes(16).toString('base64url'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    });
    const via = listenUrlOf(signIn);
    let page = await this.timed('authorize', () => browser.open(`${issuer}/authorize?${query}`, via), expectPage('authorize'));
    if (isSignInPage(page)) {
      if (random() < WRONG_PASSWORD_FIRST) {
        const before = page;
        page = await this.timed('sign-in (wrong password)', () => browser.submit(before, { username: user.sub, password: 'not-the-password' }, via), (again) => {
          // Refused with the sign-in page again, its error in the user's words (a 4xx page).
          if (!isSignInPage(again) || again.status < 400 || again.status >= 500) {
            throw new StepFailed('sign-in (wrong password)', String(again.status), again.location ? 'signed in' : 'no sign-in page again');
          }
        });
      }
      const form = page;
      page = await this.timed('sign-in', () => browser.submit(form, { username: user.sub, password: SOAK_PASSWORD }, via), expectPage('sign-in'));
    } else {
      this.tally.stillSignedIn += 1;
    }
    if (!page.location && page.html.includes('value="allow"')) {
      this.tally.consentShown += 1;
      const consent = page;
      page = await this.timed('consent', () => browser.submit(consent, { decision: 'allow' }, via), expectPage('consent'));
    }
    const back = page.location ? new URL(page.location) : undefined;
    const code = back?.searchParams.get('code');
    if (!back || !code || back.searchParams.get('state') !== state) {
      throw new StepFailed('authorize', String(page.status), back?.searchParams.get('error') ?? 'no code at the redirect');
    }

    const other = this.targets.find((target) => target !== signIn)!;
    const exchangeAt = random() < OTHER_INSTANCE ? other : signIn;
    if (exchangeAt !== signIn) this.tally.otherInstance += 1;
    const tokens = await this.token('code exchange', exchangeAt, {
      grant_type: 'authorization_code', code, redirect_uri: signIn.app.redirectUri, code_verifier: verifier,
    });
    let refreshToken = tokens.refresh_token;
    for (let left = Math.floor(random() * (MAX_REFRESHES + 1)); left > 0; left -= 1) {
      await sleep(random() * REFRESH_PAUSE_MS);
      const refreshed = await this.token('refresh', pick(this.targets), { grant_type: 'refresh_token', refresh_token: refreshToken });
      refreshToken = refreshed.refresh_token;
      this.tally.refreshes += 1;
    }
    if (random() < REVOKED) {
      await this.revoke(pick(this.targets), refreshToken);
      this.tally.revoked += 1;
    } else {
      this.tally.abandoned += 1;
    }
  }

  /** A token request; a 200 must hold an access token, an ID token and a refresh token. */
  private async token(operation: Operation, target: ServerTarget, form: Record<string, string>): Promise<{ refresh_token: string }> {
    const { answer } = await this.timed(operation, () => post(atInstance(target.tokenUrl, listenUrlOf(target)), target, form), ({ status, answer }) => {
      if (status !== 200) throw new StepFailed(operation, String(status), errorCode(answer));
      for (const field of ['access_token', 'id_token', 'refresh_token']) {
        if (typeof answer[field] !== 'string') throw new StepFailed(operation, String(status), `no ${field} in the answer`);
      }
    });
    return { refresh_token: answer.refresh_token as string };
  }

  private async revoke(target: ServerTarget, refreshToken: string): Promise<void> {
    const revokeUrl = atInstance(target.tokenUrl.replace(/\/token$/, '/revoke'), listenUrlOf(target));
    await this.timed('revoke', () => post(revokeUrl, target, { token: refreshToken, token_type_hint: 'refresh_token' }), ({ status, answer }) => {
      if (status !== 200) throw new StepFailed('revoke', String(status), errorCode(answer));
    });
  }
}

/** POSTs a form as the app (Basic); the answer is read whole (JSON, or nothing) within the step. */
async function post(url: string, target: ServerTarget, form: Record<string, string>): Promise<{ status: number; answer: Record<string, unknown> }> {
  const response = await fetchWithin(url, {
    method: 'POST',
    headers: { authorization: basic(target.app.clientId, target.app.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  }, REQUEST_TIMEOUT_MS);
  return { status: response.status, answer: await jsonOf(response) };
}

function listenUrlOf(target: ServerTarget): string {
  if (!target.listenUrl) throw new Error('a soak server must say where it listens');
  return target.listenUrl;
}

const isSignInPage = (page: Page) => !page.location && page.html.includes('name="password"');

/** A page step must end on a page of ours (200) or at the app's redirect URI. */
const expectPage = (operation: Operation) => (page: Page): void => {
  if (!page.location && page.status !== 200) throw new StepFailed(operation, String(page.status), '');
};

async function jsonOf(response: Response): Promise<Record<string, unknown>> {
  const text = await textOf(response);
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The OAuth error code of an answer, if it is one (a short token of letters and underscores). */
function errorCode(answer: Record<string, unknown>): string {
  return typeof answer.error === 'string' && /^[a-z_]{1,64}$/.test(answer.error) ? answer.error : '';
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
const ms = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(1));
const clock = (ms: number) => {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/** The latency at `fraction` of the sorted successes; undefined without any. */
function percentile(sorted: number[], fraction: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

interface Snapshot {
  at: number;
  flows: number;
  usedMemory: number;
}

/** What the timed soak found; `ok` is false when it saw an error or transient state without TTL. */
export interface TimedSoakResult {
  ok: boolean;
}

function printReport(traffic: Traffic, seconds: number, start: Snapshot, warm: Snapshot | undefined, end: Snapshot, found: Inventory): boolean {
  const { tally } = traffic;
  console.log(
    `  flows: ${tally.flows} (${tally.returning} of returning users, ${tally.stillSignedIn} still signed in on their browser, `
      + `${tally.consentShown} asked for consent, ${tally.otherInstance} codes exchanged at the other instance, ${tally.refreshes} refreshes, `
      + `${tally.revoked} refresh tokens revoked, ${tally.abandoned} abandoned, ${tally.failedFlows} ended by an error)`,
  );
  console.log('');
  console.log('                operation   count  errors  p50 ms  p99 ms');
  for (const operation of OPERATIONS) {
    const sorted = [...traffic.latencies.get(operation)!].sort((a, b) => a - b);
    const errors = traffic.errors.get(operation)!;
    if (sorted.length === 0 && errors === 0) continue;
    console.log(
      `  ${operation.padStart(23)}  ${String(sorted.length).padStart(6)}  ${String(errors).padStart(6)}  `
        + `${ms(percentile(sorted, 0.5)).padStart(6)}  ${ms(percentile(sorted, 0.99)).padStart(6)}`,
    );
  }
  console.log('');
  const after = warm ?? start;
  const minutes = (end.at - after.at) / 60_000;
  const growth = end.usedMemory - after.usedMemory;
  console.log(
    `  Redis used_memory: ${mib(start.usedMemory)} at the start, ${warm ? `${mib(warm.usedMemory)} at ${clock(warm.at - start.at)}, ` : ''}`
      + `${mib(end.usedMemory)} at the end: ${minutes > 0 ? `${mib(growth / minutes)} per minute` : 'n/a'} after ${warm ? 'warm-up' : 'the start'}`,
  );
  console.log(`  keys: ${found.keys}; by kind (the key without prefix, hash tag and id):`);
  console.log('                   kind    keys       bytes  largest  no TTL');
  for (const kind of found.kinds) {
    console.log(
      `  ${kind.kind.padStart(21)}  ${String(kind.count).padStart(6)}  ${String(kind.bytes).padStart(10)}  ${String(kind.largest).padStart(7)}  ${String(kind.withoutTtl).padStart(6)}`,
    );
  }
  console.log(`  largest key: ${found.largest ? `of kind ${found.largest.kind}, ${found.largest.bytes} bytes (MEMORY USAGE)` : 'none'}`);
  if (traffic.firstErrors.length > 0) {
    console.log(`  first errors (of ${traffic.errorCount()}):`);
    for (const line of traffic.firstErrors) console.log(`    ${line}`);
  }
  const flows = end.flows - after.flows;
  const transient = found.kinds.filter((kind) => kind.withoutTtl > 0 && !isKeptKind(kind.kind));
  const kept = found.kinds.filter((kind) => kind.withoutTtl > 0 && isKeptKind(kind.kind));
  const errors = traffic.errorCount();
  console.log(
    `  verdict: ${flows > 0 ? `${Math.round(growth / flows)} bytes of Redis per flow` : 'no flow'} after ${warm ? 'warm-up' : 'the start'} `
      + `(${flows} flows, ${(seconds / 60).toFixed(1)} min in all); `
      + (transient.length === 0
        ? `no transient key without TTL (without TTL: ${kept.length > 0 ? kept.map((kind) => `${kind.kind} ${kind.withoutTtl}`).join(', ') : 'none'}, records kept until deleted)`
        : `TRANSIENT KEYS WITHOUT TTL: ${transient.map((kind) => `${kind.kind} ${kind.withoutTtl}`).join(', ')}`)
      + `; ${errors} errors`,
  );
  return transient.length === 0 && errors === 0;
}

/**
 * Runs the soak for `seconds` on two server processes of ours and a fresh redis-server, printing a
 * progress line at every mark (a minute, or a quarter of a shorter soak) and the report at the end.
 */
export async function runTimedSoak(seconds: number): Promise<TimedSoakResult> {
  const markMs = Math.min(60, seconds / 4) * 1000;
  console.log(
    `soak: ${seconds} s of named-user flows on ${INSTANCES} server processes sharing one redis-server, ${CONCURRENCY} at a time, `
      + `${USERS.length} users; the servers' default lifetimes (codes 5 min, pending sign-ins 10 min, refresh tokens 1 h, `
      + 'sessions 1 day, grants 25 h without a refresh): what a flow leaves outlives the soak but codes and pending sign-ins',
  );
  const redisProcess: RedisProcess = await startRedis();
  const interrupted = () => void redisProcess.stop().finally(() => process.exit(130));
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  const redis = new Redis(redisProcess.url);
  let servers: ServerProcess[] = [];
  try {
    const env = { ...(await sharedKeysEnvironment()), [SOAK_ENVIRONMENT]: SOAK_BASE_URL };
    servers = await startServers('ours', {
      alg: 'ES256', processes: INSTANCES, connections: CONCURRENCY, redis: { url: redisProcess.url, pids: [redisProcess.pid], stop: () => redisProcess.stop() }, env, namedUser: true, lifecycle: false, clientAuth: false, idTokenAlgorithms: ['RS256'],
    });
    const began = Date.now();
    const traffic = new Traffic(servers.map((server) => server.target), began + seconds * 1000);
    const snapshot = async (): Promise<Snapshot> => ({ at: Date.now(), flows: traffic.tally.flows, usedMemory: await usedMemory(redis) });
    const start = await snapshot();
    let warm: Snapshot | undefined;
    const progress = setInterval(() => {
      void (async () => {
        const now = await snapshot();
        warm ??= now;
        console.log(
          `  ${clock(now.at - began)}  flows ${now.flows}  errors ${traffic.errorCount()}  used_memory ${mib(now.usedMemory)}  keys ${await redis.dbsize()}`,
        );
      })().catch(() => {});
    }, markMs);
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, () => traffic.worker()));
    } finally {
      clearInterval(progress);
    }
    const end = await snapshot();
    const found = await inventory(redis);
    return { ok: printReport(traffic, (end.at - began) / 1000, start, warm, end, found) };
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    redis.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
    await redisProcess.stop();
  }
}
