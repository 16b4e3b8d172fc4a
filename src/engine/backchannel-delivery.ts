import { AsyncLocalStorage } from 'node:async_hooks';
import { lookup as resolve, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { deliveryRefusal, exceptionsFor, type PrivateHosts } from '../../policies/backchannel-logout.js';
import { NO_TRACING, type Tracing } from '../observability/tracing.js';

/*
 * BACK-CHANNEL DELIVERY: the engine's outgoing requests (its `fetch` hook), made by us so that
 * the rule of policies/backchannel-logout.ts decides where they go. The engine would refuse every
 * special-use address, the operator's own local and private apps included, and only once the
 * socket is connected (a refusal still told whether the port was open). Here:
 *
 * - An IP-literal host is checked before anything; a host name is resolved, and EVERY address it
 *   resolves to is checked, before a connection is opened, and the connection goes to exactly
 *   those addresses (no second resolution a rebinding name could answer differently). A refused
 *   delivery connects to nothing.
 * - The operator's exceptions (`backchannelLogout.privateHosts`) apply to the operator's apps only:
 *   the engine's `Client.prototype.backchannelLogout` runs in a scope naming the app's owner
 *   (src/engine/patches.ts); anything the engine fetches outside such a scope gets none.
 * - Like the engine: 2.5 s for the whole exchange, redirects not followed (the answer's status is
 *   what the engine judges: a logout token is delivered by a 200 or 204), no user agent header.
 */

/** How long a delivery may take, connection and answer included (the engine's own timeout). */
export const DELIVERY_TIMEOUT_MS = 2500;
/** An answer body is read up to this size, then the connection is cut (nobody reads it). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Why a back-channel logout was not delivered: `refused` means no connection was opened. */
export type DeliveryFailure = 'refused' | 'timeout' | 'unreachable' | 'too_large';

/** A delivery that failed before an answer; `detail` names the host and reason, never the token. */
export class DeliveryError extends Error {
  constructor(
    readonly failure: DeliveryFailure,
    readonly detail: string,
  ) {
    super(`back-channel delivery ${failure}: ${detail}`);
    this.name = 'DeliveryError';
  }
}

/** What the engine fetches in a scope: a logout token's delivery, or a client's key set. */
export type DeliveryPurpose = 'backchannel_logout_uri' | 'jwks_uri';

/** Whose logout token (or key set) the engine is fetching for, and which. */
interface DeliveryScope {
  tenant?: string | undefined;
  purpose: DeliveryPurpose;
}

const scope = new AsyncLocalStorage<DeliveryScope>();

/**
 * Runs `deliver` (the engine's delivery for one app) in the scope of that app's owner: its
 * requests get the operator's exceptions only when the app is the operator's (no tenant).
 */
export function deliveringFor<T>(app: { tenant?: string | undefined }, deliver: () => T, purpose: DeliveryPurpose = 'backchannel_logout_uri'): T {
  return scope.run({ tenant: app.tenant, purpose }, deliver);
}

/** What the engine passes its `fetch` hook (a subset of RequestInit: it sets these). */
export interface EngineFetchInit {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: unknown;
  signal?: AbortSignal | null;
}

/** The fetch the engine calls: checked addresses, a global `Response`. */
export type DeliveryFetch = (input: string | URL | Request, init?: EngineFetchInit) => Promise<Response>;

/** `dns.lookup` that refuses the whole name when one address it resolves to is refused. */
function checkedLookup(exceptions: PrivateHosts): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { family: options.family ?? 0, hints: options.hints ?? 0, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refusal = deliveryRefusal(hostname, addresses.map((entry) => entry.address), exceptions);
      if (refusal) {
        return callback(Object.assign(new DeliveryError('refused', `${hostname} resolves to ${refusal.address}, a special-use address (${refusal.range})`), { code: 'EREFUSED' }), '', 0);
      }
      if (options.all) return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new TypeError('back-channel delivery sends strings, forms or bytes only');
}

/** The answer as a global Response (the engine reads its status); the body up to its cap. */
function responseOf(answer: IncomingMessage, maxBytes: number, tooLarge: 'cut' | 'fail', host: string): Promise<Response> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    answer.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        if (tooLarge === 'fail') fail(new DeliveryError('too_large', `${host} answered more than ${maxBytes} bytes`));
        answer.destroy();
        return;
      }
      chunks.push(chunk);
    });
    answer.on('error', fail);
    answer.on('close', () => {
      const status = answer.statusCode ?? 0;
      if (status < 200 || status > 599) {
        fail(new DeliveryError('unreachable', `answered with status ${status}`));
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
      }
      // A body is not allowed with these statuses; nobody reads it anyway.
      const body = [101, 204, 205, 304].includes(status) || chunks.length === 0 ? null : Buffer.concat(chunks);
      done(new Response(body, { status, statusText: answer.statusMessage ?? '', headers }));
    });
  });
}

/**
 * The engine's `fetch` hook: a request to `input` that goes only where the back-channel rule
 * allows, with the operator's exceptions (`privateHosts`) for the operator's own apps.
 */
export function deliveryFetch(privateHosts: PrivateHosts, tracing: Tracing = NO_TRACING): DeliveryFetch {
  return checkedFetch({
    exceptions: () => exceptionsFor(scope.getStore(), privateHosts),
    timeoutMs: DELIVERY_TIMEOUT_MS,
    maxAnswerBytes: MAX_ANSWER_BYTES,
    tooLarge: 'cut',
    tracing,
    purpose: () => scope.getStore()?.purpose ?? 'engine',
  });
}

/** How a checked fetch goes (deliveryFetch's, and the federation's: src/federation/upstreams.ts). */
export interface CheckedFetchOptions {
  /** The special-use hosts and networks this request may reach (none: public addresses only). */
  exceptions: () => PrivateHosts;
  /** The whole exchange, connection and answer. */
  timeoutMs: number;
  /** The largest answer body read. */
  maxAnswerBytes: number;
  /** A larger answer: `cut` (its start is the answer) or `fail` (a `too_large` DeliveryError). */
  tooLarge: 'cut' | 'fail';
  /** Each request in a CLIENT span, its trace context in its headers (none: NO_TRACING). */
  tracing?: Tracing;
  /** What the request is for, in its span's name (`POST backchannel_logout_uri`). */
  purpose?: () => string;
}

/**
 * A fetch that goes only where the delivery rule (policies/backchannel-logout.ts) allows, with
 * `exceptions`: every address checked before a connection is opened, a timeout for the whole
 * exchange, a bounded answer, redirects not followed.
 */
export function checkedFetch(settings: CheckedFetchOptions): DeliveryFetch {
  const { timeoutMs } = settings;
  return async (input, init = {}) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new DeliveryError('refused', `the ${target.protocol} scheme is not delivered to`);
    const exceptions = settings.exceptions();
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // An IP literal is connected to without a lookup: checked here, before anything.
    if (isIP(host) !== 0) {
      const refusal = deliveryRefusal(host, [host], exceptions);
      if (refusal) throw new DeliveryError('refused', `${host} is a special-use address (${refusal.range})`);
    }
    const body = bodyOf(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers ?? {}).forEach((value, name) => {
      // The engine blanks the user agent; node:http sends none of its own.
      if (value !== '') headers[name] = value;
    });
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
    const options: RequestOptions = {
      method: init.method ?? 'GET',
      headers,
      signal,
      lookup: checkedLookup(exceptions),
      // A connection of its own: never one opened for another delivery, under other checks.
      agent: false,
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const tracing = settings.tracing ?? NO_TRACING;
    // Our own errors as they are; a socket's by its code only (its message may quote the URI).
    const failure = (error: Error & { code?: string }): DeliveryError => {
      if (error instanceof DeliveryError) return error;
      if (signal.aborted) return new DeliveryError('timeout', `${target.host} gave no answer within ${timeoutMs / 1000} s`);
      return new DeliveryError('unreachable', `${target.host}: ${error.code ?? error.name}`);
    };
    const exchange = () => new Promise<Response>((done, fail) => {
      const request = send(target, options, (answer) => {
        responseOf(answer, settings.maxAnswerBytes, settings.tooLarge, target.host).then(done, (error: Error) => fail(failure(error)));
      });
      request.on('error', (error) => fail(failure(error)));
      request.end(body);
    });
    if (!tracing.enabled) return exchange();
    return tracing.outgoing(`${options.method!} ${settings.purpose?.() ?? 'request'}`, options.method!, target, headers, exchange);
  };
}
