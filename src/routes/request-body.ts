import { InvalidRequest, PayloadTooLarge } from '../errors.js';
import type { Context } from 'koa';

/** Reads the raw request body, refusing more than `limit` bytes without buffering them. */
export async function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) throw new PayloadTooLarge(limit);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of ctx.req) {
    received += (chunk as Buffer).length;
    if (received > limit) throw new PayloadTooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  if (declared !== undefined && received !== declared) {
    throw new InvalidRequest('request body length does not match Content-Length');
  }
  return Buffer.concat(chunks, received);
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
