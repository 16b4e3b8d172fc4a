import type { Context, Next } from 'koa';
import { checkTokenRequest, normalizeTokenRequest, type GrantTable } from '../../grants/index.js';
import { translateTokenAnswer } from '../../engine/errors.js';
import { basicCredentialsOf, readForm, type ReadForm } from '../../http/oauth-request.js';
import { encodeForm } from '../../http/request-body.js';
import type { Tracing } from '../../observability/tracing.js';

const READABLE_AGAIN: PropertyDescriptor = { value: true, configurable: true };

/**
 * Hands the engine the body we consumed (the token and pushed authorization request endpoints). The engine reads `ctx.req` as a stream; the request is
 * made to yield our bytes in one chunk (own properties on it: cheaper than a new stream, and than
 * an object inheriting from it, which V8 makes pay for turning the request into a prototype).
 */
export function replaceBody(ctx: Context, { params, raw }: ReadForm): void {
  const body = raw ?? Buffer.from(encodeForm(params));
  const req = ctx.req;
  req.headers['content-type'] = 'application/x-www-form-urlencoded';
  req.headers['content-length'] = String(body.length);
  delete req.headers['transfer-encoding'];
  Object.defineProperty(req, 'readable', READABLE_AGAIN);
  Object.defineProperty(req, 'iterator', { value: () => [body].values(), configurable: true });
}

/**
 * In front of the engine's token endpoint: reads the body once (size limit, strict parsing, no
 * repeated parameters, multipart accepted), checks the request against its grant's rules
 * (src/grants), then hands the engine a urlencoded body; once the engine answered with tokens,
 * what the grant does after issuing (a grant extended, the answer's scope), and once it refused
 * one, what the grant does then (a code used up all the same).
 */
export function tokenEndpointGuard(limit: number, grants: GrantTable, tracing: Tracing) {
  return async function guardTokenEndpoint(ctx: Context, next: Next): Promise<void> {
    const form = await readForm(ctx, limit);
    const grantType = checkTokenRequest(form.params, () => basicCredentialsOf(ctx));
    replaceBody(ctx, normalizeTokenRequest(grantType, form.params) ? { params: form.params, raw: undefined } : form);
    // RFC 6749 §5.2: errors of the token endpoint are JSON; the engine would render HTML to a
    // caller that prefers it.
    ctx.req.headers.accept = 'application/json';
    // The token requests read in this turn of the event loop go on together, after it: measured,
    // a request that runs straight through costs more CPU (client_credentials of a cached client,
    // which asks the store nothing: about 340 µs per token against 290-310 with this yield), as its
    // signature and its answer then each wake the process alone instead of with the others'.
    await new Promise((resolve) => setImmediate(resolve));
    if (tracing.enabled) await traceIssuance(ctx, grantType, tracing, next);
    else await next();
    translateTokenAnswer(ctx as Parameters<typeof translateTokenAnswer>[0], grantType);
    if (ctx.status === 200) await grants.get(grantType)?.afterIssue?.(ctx);
    // A 503 is the store's failure: the client is told to retry, nothing is used up.
    else if (ctx.status !== 503) await grants.get(grantType)?.afterRefusal?.(ctx);
  };
}

/**
 * The engine's handling of a token request in a span of its own (`engine token`); the request's
 * span is told the grant type and, once tokens were issued (the client authenticated), the
 * client's id (an identifier, not a secret).
 */
async function traceIssuance(ctx: Context, grantType: string, tracing: Tracing, next: Next): Promise<void> {
  await tracing.inSpan('engine token', { 'oauth.grant_type': grantType }, next);
  const clientId = ctx.status === 200 ? (ctx as { oidc?: { client?: { clientId?: unknown } } }).oidc?.client?.clientId : undefined;
  tracing.annotate(typeof clientId === 'string' ? { 'oauth.grant_type': grantType, 'oauth.client_id': clientId } : { 'oauth.grant_type': grantType });
}
