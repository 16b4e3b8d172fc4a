import type { JWK } from 'jose';
import type { Account, AccountStore } from '../src/accounts.js';
import type { PrivateJwks } from '../src/engine/keys.js';
import type { I18nOptions } from '../src/i18n/localizer.js';
import type { Messages } from '../src/i18n/messages/en.js';
import { resolveOptions, type ApiDefinitionInput, type AuthServerOptions } from '../src/options.js';
import type { BrandingOption } from '../src/pages/branding.js';
import type { PortalTextOverrides } from '../src/portal/text.js';
import type { TenantPolicyFunction } from '../policies/tenant-policy.js';

/*
 * AuthServerOptions is derived from the option schema (src/options.ts). Where zod's own type would
 * be wider than what the schema's checks let through, the schema says the precise type, so that a
 * host's editor refuses what the server would refuse at start. Each case below is a host's code:
 * what type-checks is accepted by the schema, and each `@ts-expect-error` is refused by both (the
 * type-check runs with the tests: `npm run typecheck`).
 */

const base = { baseUrl: 'https://auth.example.com', apis: [{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'Read users' } }] };

class HostUsers implements AccountStore {
  async authenticate(): Promise<Account | undefined> {
    return undefined;
  }

  async findAccount(): Promise<Account | undefined> {
    return undefined;
  }
}

const key: JWK = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' };
const jwks: PrivateJwks = { keys: [key] };
const dutch: Partial<Messages> = { signInTitle: 'Inloggen', signInContinueTo: (app) => `om verder te gaan naar ${app}` };
const i18n: I18nOptions = { messages: { nl: dutch }, defaultLocale: 'nl' };
const portalTexts: PortalTextOverrides = { product: 'Ontwikkelaarsportaal', clients: { heading: 'Integraties' } };
const branding: BrandingOption = async (tenant) => (tenant ? { accentColor: '#1f5fcf', productName: 'Acme' } : undefined);
const tenantPolicy: TenantPolicyFunction = () => ({ allowedScopes: ['scim.read'] as const });
const api: ApiDefinitionInput = { id: 'people', name: 'People', scopes: { 'people.read': { en: 'Read people', de: 'Personen lesen' } }, constraints: ['group'] };

// @ts-expect-error: exactly one place where Redis is
const urlAndCluster: AuthServerOptions = { ...base, store: { type: 'redis', url: 'redis://a', cluster: { nodes: ['redis://b'] } } };
// @ts-expect-error: a scope's words per language need English
const wordsWithoutEnglish: AuthServerOptions = { ...base, apis: [{ id: 'a', name: 'A', scopes: { x: { de: 'Lesen' } } }] };
// @ts-expect-error: an algorithm we do not sign with
const hmac: AuthServerOptions = { ...base, accessTokenAlgorithm: 'HS256' };
// @ts-expect-error: an ID-token algorithm we do not sign with
const hmacIdTokens: AuthServerOptions = { ...base, idTokenAlgorithms: ['RS256', 'HS256'] };
// @ts-expect-error: a private JWK, not a string
const notAJwk: AuthServerOptions = { ...base, keys: { jwks: { keys: ['x'] } } };
// @ts-expect-error: the pages have no such text
const unknownPageText: AuthServerOptions = { ...base, i18n: { messages: { nl: { signInTitel: 'Inloggen' } } } };
// @ts-expect-error: the portal has no such text
const unknownPortalText: AuthServerOptions = { ...base, portal: { messages: { nl: { produkt: 'Portaal' } } } };
// @ts-expect-error: a branding has no such field
const unknownBrandingField: AuthServerOptions = { ...base, branding: { colour: '#1f5fcf' } };
// @ts-expect-error: a function of the tenant, not a name
const displayNameNotAFunction: AuthServerOptions = { ...base, tenantDisplayName: 'Acme' };

describe('AuthServerOptions (derived from the option schema)', () => {
  it("takes a host's typed values, and the schema accepts them", () => {
    const options: AuthServerOptions = {
      ...base,
      apis: [...base.apis, api],
      store: { type: 'redis', sentinel: { sentinels: [{ host: '10.0.0.5', port: 26379 }], name: 'talent-auth' }, tls: { servername: 'redis' } },
      accounts: new HostUsers(),
      keys: { jwks },
      i18n,
      portal: { enabled: true, messages: { nl: portalTexts } },
      branding,
      tenantPolicy,
      tenantDisplayName: async (tenant) => tenant.toUpperCase(),
      onAuditEvent: (event) => void event.type,
      rateLimits: { failedClientAuth: false, failedSignIn: { perUsername: { max: 5, windowSeconds: 600 } } },
    };
    const resolved = resolveOptions(options);
    expect(resolved.keys?.jwks?.keys[0]).toEqual(key);
    expect(resolved.i18n?.messages?.nl).toEqual(dutch);
    expect(resolved.store).toEqual(options.store);
  });

  it.each<[string, AuthServerOptions, RegExp]>([
    ['a Redis store at a URL and a cluster at once', urlAndCluster, /exactly one of url, cluster or sentinel/],
    ['scope words without English', wordsWithoutEnglish, /needs English words/],
    ['an algorithm we do not sign with', hmac, /accessTokenAlgorithm/],
    ['an ID-token algorithm we do not sign with', hmacIdTokens, /idTokenAlgorithms\.1/],
    ['a key that is not a JWK', notAJwk, /keys\.jwks\.keys\.0/],
    ['a page text that is not ours', unknownPageText, /i18n\.messages\.nl\.signInTitel: is not a text of the pages/],
    ['a portal text that is not ours', unknownPortalText, /portal\.messages\.nl\.produkt: is not a text of the portal/],
    ['a branding field that is not ours', unknownBrandingField, /branding/],
    ['a tenant display name that is not a function', displayNameNotAFunction, /tenantDisplayName: must be a function of the tenant/],
  ])('refuses %s, in the type and in the schema', (_name, options, message) => {
    expect(() => resolveOptions(options)).toThrow(message);
  });
});
