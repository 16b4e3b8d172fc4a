import { errors } from 'oidc-provider';
import { AccessDenied, InvalidGrant, InvalidRequest, InvalidScope, TooManyRequests } from '../../policies/errors.js';
import { engineErrors, toEngineError, translateTokenAnswer } from '../../src/engine/errors.js';

describe('where our errors and the engine\'s meet (src/engine/errors.ts)', () => {
  it.each([
    [new InvalidRequest('state must be at most 1024 characters'), 'invalid_request', 400, 'state must be at most 1024 characters'],
    [new InvalidScope('unknown scope "x"'), 'invalid_scope', 400, "unknown scope 'x'"],
    [new AccessDenied('your organization does not allow this application'), 'access_denied', 400, 'your organization does not allow this application'],
    [new TooManyRequests(3), 'temporarily_unavailable', 429, 'too many failed client authentications; retry after 3 s'],
    // Every invalid_grant says the same, as the engine's own: which check failed is not for callers.
    [new InvalidGrant('refresh token already used'), 'invalid_grant', 400, 'grant request is invalid'],
  ])('%p reaches the engine as its own error with code %s, status %i', (ours, code, status, description) => {
    const engine = toEngineError(ours) as { error: string; status: number; statusCode: number; error_description: string; expose: boolean };
    expect(engine).toBeInstanceOf(errors.OIDCProviderError);
    expect(engine).toEqual(expect.objectContaining({ error: code, status, statusCode: status, error_description: description, expose: true }));
  });

  it('leaves other errors as they are', () => {
    const other = new TypeError('x');
    expect(toEngineError(other)).toBe(other);
  });

  it('translates what a hook throws, synchronously or not', async () => {
    expect(() => engineErrors(() => { throw new InvalidRequest('x'); })()).toThrow(errors.OIDCProviderError);
    await expect(engineErrors(async () => { throw new InvalidRequest('x'); })()).rejects.toBeInstanceOf(errors.OIDCProviderError);
    expect(engineErrors((a: number) => a + 1)(1)).toBe(2);
  });

  it.each([
    ['a client not registered for the grant type', 400, 'invalid_request', false, 'unauthorized_client'],
    ['a client registered for it (another invalid_request)', 400, 'invalid_request', true, 'invalid_request'],
    ['another error', 400, 'invalid_grant', false, 'invalid_grant'],
    ['no client known (authentication failed)', 400, 'invalid_request', undefined, 'invalid_request'],
  ])('token answers: %s → %s', (_name, status, error, allowed, expected) => {
    const ctx = {
      status,
      body: { error, error_description: 'x' } as unknown,
      oidc: allowed === undefined ? {} : { client: { grantTypeAllowed: () => allowed } },
    };
    translateTokenAnswer(ctx, 'client_credentials');
    expect((ctx.body as { error: string }).error).toBe(expected);
  });
});
