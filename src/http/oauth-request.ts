import type { Context } from 'koa';
import { parseBasicAuthorization, type BasicCredentials } from '../../policies/client-authentication.js';
import { InvalidRequest } from '../../policies/errors.js';
import { parseMultipart, parseUrlEncoded, readBody, type FormParams } from './request-body.js';

const CREDENTIALS = Symbol('the Basic credentials of this request');
const FORM = Symbol('the form parameters of this request');

type ReadCredentials = { credentials: BasicCredentials | undefined } | { error: unknown };

/**
 * The Basic credentials of a token request, read from its Authorization header once and shared by
 * the request guard and the failed-authentication limit (the engine reads the header again to
 * check the secret: its own parse, which we cannot hand anything to).
 * @throws InvalidClient for a malformed header, each time it is asked.
 */
export function basicCredentialsOf(ctx: Context): BasicCredentials | undefined {
  const state = ctx.state as Record<symbol, ReadCredentials | undefined>;
  let read = state[CREDENTIALS];
  if (!read) {
    const header = ctx.get('authorization');
    try {
      read = { credentials: header ? parseBasicAuthorization(header) : undefined };
    } catch (error) {
      read = { error };
    }
    state[CREDENTIALS] = read;
  }
  if ('error' in read) throw read.error;
  return read.credentials;
}

/** A form body read strictly (no repeated parameter, empty ones dropped). */
export interface ReadForm {
  params: FormParams;
  /** The urlencoded bytes the engine is to read; undefined when they must be re-encoded. */
  raw: Buffer | undefined;
}

/**
 * The form body of a token, revocation or introspection request: urlencoded (or multipart with
 * text fields), within `limit` bytes, each parameter once.
 * @throws InvalidRequest, PayloadTooLarge, RequestTimeout.
 */
export async function readForm(ctx: Context, limit: number): Promise<ReadForm> {
  const form = await readFormOnce(ctx, limit);
  (ctx.state as Record<symbol, FormParams | undefined>)[FORM] = form.params;
  return form;
}

async function readFormOnce(ctx: Context, limit: number): Promise<ReadForm> {
  // RFC 9110 §8.3.1: media types are case-insensitive (Koa leaves them as sent).
  const type = ctx.request.type.toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const raw = await readBody(ctx, limit);
    const params = parseUrlEncoded(raw);
    return { params, raw: params.size === countPairs(raw) ? raw : undefined };
  }
  if (type === 'multipart/form-data') {
    return { params: await parseMultipart(await readBody(ctx, limit), ctx.get('content-type')), raw: undefined };
  }
  throw new InvalidRequest('the request body must be application/x-www-form-urlencoded');
}

/**
 * The parameters readForm read from this request's body, if it read them (for the
 * failed-authentication limit, which wraps the guards that read the body).
 */
export function formParamsOf(ctx: Context): FormParams | undefined {
  return (ctx.state as Record<symbol, FormParams | undefined>)[FORM];
}

/** How many name=value pairs a urlencoded body holds (to tell whether parsing dropped any). */
function countPairs(raw: Buffer): number {
  let pairs = raw.length ? 1 : 0;
  for (const byte of raw) if (byte === 0x26) pairs += 1;
  return pairs;
}
