import { InvalidRequest, PayloadTooLarge } from '../errors.js';
import type { Context } from 'koa';

/** Reads the raw request body, refusing more than `limit` bytes without buffering them. */
export function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) return Promise.reject(new PayloadTooLarge(limit));
  const req = ctx.req;
  // Plain stream events: the async-iterator form costs several times more per request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        req.resume();
        reject(new PayloadTooLarge(limit));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      cleanup();
      if (declared !== undefined && received !== declared) {
        reject(new InvalidRequest('request body length does not match Content-Length'));
      } else {
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      }
    };
    const onError = () => {
      cleanup();
      reject(new InvalidRequest('the request body could not be read'));
    };
    const onAborted = () => onError();
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

export type FormParams = Map<string, string>;

function decodeComponent(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidRequest('request body values are not correctly URL-encoded');
  }
}

/**
 * RFC 6749 §3.2: parameters MUST NOT be included more than once; §3.1: a parameter sent without a
 * value is treated as omitted.
 */
function addParam(params: FormParams, name: string, value: string): void {
  if (params.has(name)) throw new InvalidRequest(`parameter "${name}" must not be provided twice`);
  params.set(name, value);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** application/x-www-form-urlencoded, strictly: malformed escapes or invalid UTF-8 are refused. */
export function parseUrlEncoded(body: Buffer): FormParams {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new InvalidRequest('request body is not valid UTF-8');
  }
  const params: FormParams = new Map();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1));
    addParam(params, name, value);
  }
  for (const [name, value] of params) if (value === '') params.delete(name);
  return params;
}

/** multipart/form-data with text fields only (the spec shows one token request sent this way). */
export async function parseMultipart(body: Buffer, contentType: string): Promise<FormParams> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new InvalidRequest('request body is not valid multipart/form-data');
  }
  const params: FormParams = new Map();
  for (const [name, value] of form.entries()) {
    if (typeof value !== 'string') throw new InvalidRequest(`parameter "${name}" must not be a file`);
    addParam(params, name, value);
  }
  for (const [name, value] of params) if (value === '') params.delete(name);
  return params;
}

export function encodeForm(params: FormParams): string {
  return new URLSearchParams([...params]).toString();
}
