import type { AccountStore } from '../../accounts.js';
import { dpopChallenge, InsufficientScope, InvalidBearerRequest, InvalidToken, TenantMoved, TokenError } from '../../../policies/errors.js';
import { DPOP_ALGORITHMS, type DpopProofs } from '../../resource-server/dpop.js';
import type { LiveTokens } from '../../engine/live-tokens.js';
import { IDENTITY_CLAIMS } from '../../../policies/scopes.js';
import type { RouteHandler } from '../../http/router.js';
import { readForm } from '../../http/oauth-request.js';

/** `Authorization: Bearer <token>` (RFC 6750 §2.1) or `DPoP <token>` (RFC 9449 §7.1). */
const TOKEN_IN_HEADER = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * USERINFO (OpenID Connect Core §5.3), `GET` or `POST {issuer}/userinfo`.
 *
 * - The access token comes in the `Authorization: Bearer` header only; one in the query or the
 *   body is refused (400 invalid_request), as a token in a URL or form ends up in logs.
 * - It must be a live named-user token of ours (src/engine/live-tokens.ts) issued with `openid`
 *   (its scope) that its grant still allows: the user allowed the app to know who she is. A machine token has no user
 *   (403 insufficient_scope); an expired, revoked, foreign or ended one is 401 invalid_token.
 * - The answer: `sub` (the ID token's) and the identity claims of the token's OIDC scopes that she
 *   allowed (`profile`, `email`), read from the AccountStore now; a user gone or moved to another tenant
 *   is 401/403 invalid_token.
 * - A DPoP-bound token (`cnf.jkt`) comes as `Authorization: DPoP` with its proof, checked as the
 *   resource-server kit checks it (src/resource-server/dpop.ts), used once in the shared store;
 *   presented as Bearer it is refused (401 invalid_token), and so is a bearer token presented as DPoP.
 * - Errors carry the RFC 6750 challenge (`WWW-Authenticate: Bearer ...`), or the DPoP one for a
 *   DPoP request.
 */
export function userinfoHandler(setup: {
  liveTokens: LiveTokens;
  accounts: AccountStore | undefined;
  realm: string;
  bodyLimit: number;
  /** DPoP proofs: their checks and the endpoint's URL as clients call it. */
  dpop: { proofs: DpopProofs; url: string };
}): RouteHandler {
  const handle = answer(setup);
  return async (ctx, params, next) => {
    try {
      await handle(ctx, params, next);
    } catch (error) {
      // RFC 9449 §7.1: the answer to a DPoP request is a DPoP challenge.
      if (error instanceof TokenError && /^DPoP /i.test(ctx.get('authorization').trim()) && !error.challenge.startsWith('DPoP ')) {
        (error as { challenge: string }).challenge = dpopChallenge(error.challenge, DPOP_ALGORITHMS);
      }
      throw error;
    }
  };
}

function answer(setup: Parameters<typeof userinfoHandler>[0]): RouteHandler {
  const { liveTokens, accounts, realm, bodyLimit } = setup;
  return async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    const header = ctx.get('authorization');
    let inBody = false;
    if (ctx.method === 'POST' && ctx.request.length) inBody = (await readForm(ctx, bodyLimit)).params.has('access_token');
    // RFC 6750 §2: the header, and only the header (a token in the query or body is refused).
    if (inBody || 'access_token' in ctx.query) throw new InvalidBearerRequest(realm);
    if (!header) throw TokenError.missing(realm);
    const match = TOKEN_IN_HEADER.exec(header.trim());
    if (!match) throw new InvalidBearerRequest(realm);
    const value = match[2]!;
    const token = await liveTokens.verify(value);
    const bound = token.claims.cnf !== undefined;
    if (match[1]!.toLowerCase() === 'dpop') {
      if (!bound) throw new InvalidToken('the access token is not bound to a DPoP key: present it as Bearer', realm);
      await setup.dpop.proofs.check({ proof: ctx.get('dpop') || undefined, method: ctx.method, url: setup.dpop.url }, value, token.claims);
    } else if (bound) {
      // RFC 9449 §7.1: a DPoP-bound token is no bearer token.
      throw new InvalidToken('the access token is bound to a DPoP key and cannot be used as a bearer token', realm);
    }
    if (!token.isNamedUser) throw new InsufficientScope('a machine token has no user: userinfo needs a named-user token', realm, ['openid']);
    const live = await liveTokens.live(token);
    if (!live) throw new InvalidToken('the access token is no longer valid', realm);
    // What this token's request was allowed (its scope) that the consent still allows (its grant).
    const allowed = new Set(String((live.grant?.openid as { scope?: unknown } | undefined)?.scope ?? '').split(' '));
    const granted = [...live.scopes].filter((scope) => allowed.has(scope));
    if (!granted.includes('openid')) throw new InsufficientScope('the user did not allow this app the openid scope', realm, ['openid']);
    const account = accounts ? await accounts.findAccount(live.sub) : undefined;
    if (!account) throw new InvalidToken('the user of this token no longer exists', realm);
    if (account.tenant !== live.tenant) throw new TenantMoved(realm);
    const claims: Record<string, unknown> = { sub: account.sub };
    for (const scope of granted) {
      for (const name of IDENTITY_CLAIMS[scope] ?? []) {
        const claim = account.claims?.[name];
        if (name !== 'sub' && claim !== undefined) claims[name] = claim;
      }
    }
    ctx.body = claims;
  };
}
