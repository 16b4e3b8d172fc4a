import { errors } from 'oidc-provider';
import { InvalidGrant, OAuthError, UnauthorizedClient } from '../../policies/errors.js';

/*
 * Where our errors and the engine's meet, both ways, by type (never by the engine's message text).
 */

/** Our error (policies/errors.ts), thrown inside an engine hook, as the engine's type: the engine then answers it with the same code. */
export function toEngineError(error: unknown): unknown {
  if (!(error instanceof OAuthError)) return error;
  // Every invalid_grant says the same on the wire, as the engine's own do: which check failed
  // (a replay, an ended grant, a foreign app) stays in the engine's error_detail, not for callers.
  if (error instanceof InvalidGrant) return new errors.InvalidGrant(error.description);
  const engineError = new errors.CustomOIDCProviderError(error.error, error.description);
  (engineError as { status: number; statusCode: number }).status = error.status;
  (engineError as { statusCode: number }).statusCode = error.status;
  return engineError;
}

/** A hook of the engine's whose errors of ours (thrown or rejected) reach the engine as its own. */
export function engineErrors<A extends unknown[], R>(hook: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    try {
      const result = hook(...args);
      return (result instanceof Promise ? result.catch((error: unknown) => Promise.reject(toEngineError(error))) : result) as R;
    } catch (error) {
      throw toEngineError(error);
    }
  };
}

interface TokenAnswer {
  status: number;
  body: unknown;
  oidc?: { client?: { grantTypeAllowed(type: string): boolean } };
}

/**
 * The engine's token answer in our terms: an authenticated client asking for a grant type it is not
 * registered for gets `unauthorized_client` (RFC 6749 §5.2), where the engine says
 * `invalid_request`. Told by state: the client authenticated (the engine knows it) and is not
 * allowed the grant type that was asked for.
 */
export function translateTokenAnswer(ctx: TokenAnswer, grantType: string): void {
  const body = ctx.body as { error?: unknown } | undefined;
  if (ctx.status !== 400 || body?.error !== 'invalid_request') return;
  const client = ctx.oidc?.client;
  if (client && !client.grantTypeAllowed(grantType)) ctx.body = new UnauthorizedClient().toJSON();
}
