import type { Context } from 'koa';
import { InvalidRequest, OAuthError, UnsupportedMediaType } from '../../policies/errors.js';
import { readBody } from './request-body.js';

/** A JSON request body (an object), or a clear 400/415. */
export async function readJsonObject(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  if (ctx.request.type.toLowerCase() !== 'application/json') {
    throw new UnsupportedMediaType('the request body must be application/json');
  }
  // RFC 8259 §8.1: JSON between systems is UTF-8; a body declared otherwise would be misread.
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaType('the request body must be UTF-8 JSON');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse((await readBody(ctx, limit)).toString('utf8'));
  } catch (error) {
    if (error instanceof OAuthError) throw error;
    throw new InvalidRequest('the request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidRequest('the request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
