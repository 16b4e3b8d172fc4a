import * as events from '../../src/audit/events.js';

const user = { actor: { type: 'user' as const, id: 'ada' }, address: '203.0.113.7' };

/** The audit events, built in one place (src/audit/events.ts): what each says, and what none ever says. */
describe('audit events (src/audit/events.ts)', () => {
  it.each([
    ['a change by a user', events.changed('client_configuration.created', user, { type: 'client_configuration', id: 'c1' }, 'acme', { name: 'Payroll' }),
      { type: 'client_configuration.created', tenant: 'acme', actor: user.actor, target: { type: 'client_configuration', id: 'c1' }, address: '203.0.113.7', details: { name: 'Payroll' } }],
    ['a change by the operator, of no tenant', events.changed('app_registration.deleted', { actor: { type: 'operator' } }, { type: 'app_registration', id: 'a1' }, undefined),
      { type: 'app_registration.deleted', actor: { type: 'operator' }, target: { type: 'app_registration', id: 'a1' } }],
    ['a consent', events.consentChanged('consent.granted', user, { tenant: 'acme', sub: 'ada', clientId: 'a1' }, { scopes: ['openid'] }),
      { type: 'consent.granted', tenant: 'acme', actor: user.actor, target: { type: 'app_registration', id: 'a1' }, address: '203.0.113.7', details: { user: 'ada', scopes: ['openid'] } }],
    ['a failed sign-in at a tenant\'s app', events.signInFailed({ clientId: 'a1', tenant: 'acme' }, '203.0.113.7', 'wrong_credentials'),
      { type: 'sign_in.failed', tenant: 'acme', actor: { type: 'anonymous' }, target: { type: 'app_registration', id: 'a1' }, address: '203.0.113.7', details: { reason: 'wrong_credentials' } }],
    ['a sign-out of nobody known', events.sessionEnded(undefined, undefined, '203.0.113.7'),
      { type: 'session.ended', actor: { type: 'anonymous' }, address: '203.0.113.7' }],
    ['a retried refresh token', events.refreshTokenPresentedAgain('refresh_token.retried', { clientId: 'a1', accountId: 'ada' }, 'acme', undefined),
      { type: 'refresh_token.retried', tenant: 'acme', actor: { type: 'client', id: 'a1' }, target: { type: 'app_registration', id: 'a1' }, details: { user: 'ada', retry: 1 } }],
    ['a reused refresh token', events.refreshTokenPresentedAgain('refresh_token.reuse_detected', { clientId: 'a1', accountId: 'ada' }, undefined, '203.0.113.7'),
      { type: 'refresh_token.reuse_detected', actor: { type: 'client', id: 'a1' }, target: { type: 'app_registration', id: 'a1' }, address: '203.0.113.7', details: { user: 'ada', grant_ended: true } }],
    ['a rate-limited machine client', events.clientAuthRateLimited({ clientId: 'c1', tenant: 'acme', machine: true }, '203.0.113.7'),
      { type: 'client_auth.rate_limited', tenant: 'acme', actor: { type: 'client', id: 'c1' }, target: { type: 'client_configuration', id: 'c1' }, address: '203.0.113.7' }],
    ['a refusal of the management API to nobody known', events.managementDenied(undefined, 'clientConfigurations', { method: 'GET', address: '203.0.113.7' }, { status: 401, error: 'invalid_token' }),
      { type: 'management.denied', actor: { type: 'anonymous' }, target: { type: 'management_api', id: 'clientConfigurations' }, address: '203.0.113.7', details: { method: 'GET', status: 401, error: 'invalid_token' } }],
    ['a sign-in hold lifted for a user unknown: her hint, never the username', events.signInUnlocked(user, 'acme', undefined, 3, 'hint123'),
      { type: 'sign_in.unlocked', tenant: 'acme', actor: user.actor, address: '203.0.113.7', details: { failures: 3, user_hint: 'hint123' } }],
    ['a signing key promoted', events.signingKeyChanged('signing_key.promoted', { actor: { type: 'operator' } }, 'kid-1', 'ES256'),
      { type: 'signing_key.promoted', actor: { type: 'operator' }, target: { type: 'signing_key', id: 'kid-1' }, details: { alg: 'ES256' } }],
  ])('%s', (_what, event, expected) => {
    expect(event).toEqual(expected);
  });
});
