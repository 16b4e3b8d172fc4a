import { mayIntrospect, type Introspector } from '../../policies/introspection.js';

const operatorApp: Introspector = { clientId: 'caller', firstParty: false, resourceServer: false };

describe('who may introspect whose tokens (policies/introspection.ts)', () => {
  it.each([
    ['a tenant\'s client, a token of its tenant', { ...operatorApp, tenant: 'acme' }, 'acme', true],
    ['a tenant\'s client, a token of another tenant', { ...operatorApp, tenant: 'acme' }, 'globex', false],
    ['a tenant\'s client, a token of no tenant', { ...operatorApp, tenant: 'acme' }, undefined, false],
    ['a tenant\'s app marked a resource server, another tenant\'s token', { ...operatorApp, tenant: 'acme', resourceServer: true }, 'globex', false],
    ['a tenant\'s first-party app, another tenant\'s token', { ...operatorApp, tenant: 'acme', firstParty: true }, 'globex', false],
    ['an operator\'s third-party app, any token', operatorApp, 'acme', false],
    ['an operator\'s third-party app, a token of no tenant', operatorApp, undefined, false],
    ['an operator\'s first-party app, any tenant', { ...operatorApp, firstParty: true }, 'globex', true],
    ['an operator\'s resource server, any tenant', { ...operatorApp, resourceServer: true }, 'acme', true],
    ['an operator\'s resource server, a token of no tenant', { ...operatorApp, resourceServer: true }, undefined, true],
    ['an operator\'s third-party app, a token issued to it', operatorApp, 'acme', true, 'caller'],
    ['a tenant\'s client, a token issued to it in another tenant (moved)', { ...operatorApp, tenant: 'acme' }, 'globex', true, 'caller'],
  ] as const)('%s → %s', (_what, caller: Introspector, tenant: string | undefined, allowed: boolean, tokenClient: string = 'someone-else') => {
    expect(mayIntrospect(caller, { clientId: tokenClient, tenant })).toBe(allowed);
  });
});
