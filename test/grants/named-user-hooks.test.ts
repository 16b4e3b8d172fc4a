import { createMemoryStore } from '../../adapters/memory.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import type { TenantPolicy } from '../../policies/tenant-policy.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import type { GrantSetup } from '../../src/grants/grant.js';
import { namedUserHooks } from '../../src/grants/named-user.js';
import { SecondFactorRules, TenantSettings } from '../../src/records/tenant-settings.js';
import { testAccounts } from '../support/accounts.js';
import { capturingLogger } from '../support/fixtures.js';

/**
 * The named-user grants' engine hooks (src/grants/named-user.ts) on their own, with the request as
 * the engine hands it over: the scopes a token may carry for this app and user (the management
 * right only at a first-party app, and only after a second factor where her tenant asks for one),
 * the sign-in claims of the code or the refresh token, and the token's `scope`. The flows over
 * HTTP: test/endpoints/sign-in/named-user-flow.test.ts, test/endpoints/management.
 */

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: [] }]);
const ADMIN = { sub: 'ada', tenant: 'acme', permissions: ['integration_setup'] };
/** acme: an admin's second factor is asked for (her management right needs it); globex: nothing asked. */
const policies: Record<string, TenantPolicy> = { acme: { secondFactor: 'required_for_permissions' }, globex: { secondFactor: 'optional' } };

function hooks() {
  const store = createMemoryStore();
  const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined);
  const setup = {
    catalog,
    audience: 'https://api.example',
    accessTokenFormat: { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } },
    tenantPolicy: (tenant: string) => policies[tenant],
    accounts: testAccounts([{ ...ADMIN, password: 'x' }, { sub: 'gil', tenant: 'globex', permissions: ['integration_setup'], password: 'x' }]),
    namedUserAccessTokenTtl: 300,
    grantIdleSeconds: 3600,
    singleUse: undefined,
    secondFactorRules: new SecondFactorRules((tenant) => policies[tenant], new TenantSettings(store.records, audit)),
  } as unknown as GrantSetup;
  return namedUserHooks(setup);
}

/** The engine's request: the user it loaded (or only the browser's session), the code or refresh token in hand. */
function request({ account, sessionAccountId, entities = {}, scope }: { account?: object; sessionAccountId?: string; entities?: object; scope?: string }) {
  return {
    oidc: { ...(account ? { account: { profile: account } } : {}), ...(sessionAccountId ? { session: { accountId: sessionAccountId } } : {}), entities, params: scope === undefined ? {} : { scope } },
    state: {},
  } as never;
}

/** The operator's app (no tenant: every tenant's users sign in to it), first-party or not. */
const app = (firstParty: boolean) => ({ clientId: firstParty ? 'portal' : 'app', first_party: firstParty }) as never;
const scopesOf = async (...args: Parameters<ReturnType<typeof hooks>['resource']>) => (await hooks().resource(...args)).scope?.split(' ');

describe("the named-user grants' hooks (src/grants/named-user.ts)", () => {
  it.each<[string, boolean, Parameters<typeof request>[0], string[]]>([
    ['a first-party app, her second factor used: the management right too', true, { account: ADMIN, entities: { AuthorizationCode: { amr: ['pwd', 'mfa'] } } }, ['scim.read', 'scim.write', MANAGEMENT_SCOPE]],
    ['a third-party app: never the management right, whoever she is', false, { account: ADMIN, entities: { AuthorizationCode: { amr: ['pwd', 'mfa'] } } }, ['scim.read', 'scim.write']],
    ['a first-party app, her password alone where a second factor is asked: her other scopes, not the management right', true, { account: ADMIN, entities: { AuthorizationCode: { amr: ['pwd'] } } }, ['scim.read', 'scim.write']],
    ['the same at a refresh: the refresh token keeps her sign-in', true, { account: ADMIN, entities: { RefreshToken: { amr: ['pwd'] } } }, ['scim.read', 'scim.write']],
    ['a first-party app, a tenant that asks no second factor: the management right after a password', true, { account: { ...ADMIN, sub: 'gil', tenant: 'globex' }, entities: { AuthorizationCode: { amr: ['pwd'] } } }, ['scim.read', 'scim.write', MANAGEMENT_SCOPE]],
    ['the authorization request of a signed-in browser, a first-party app: what she may receive', true, { sessionAccountId: 'ada' }, ['scim.read', 'scim.write', MANAGEMENT_SCOPE]],
    ['the authorization request of a signed-in browser, a third-party app: no management right', false, { sessionAccountId: 'ada' }, ['scim.read', 'scim.write']],
  ])('the scopes of %s', async (_name, firstParty, ctx, expected) => {
    expect(await scopesOf(request(ctx), app(firstParty))).toEqual(expected);
  });

  it("a named-user access token's claims: her tenant, and the sign-in the code or the refresh token recorded", async () => {
    const signIn = { acr: 'urn:talent-auth:mfa', amr: ['pwd', 'mfa'], authTime: 1_800_000_000 };
    const expected = { tenant: 'acme', acr: 'urn:talent-auth:mfa', amr: ['pwd', 'mfa'], auth_time: 1_800_000_000 };
    const token = { kind: 'AccessToken' } as never;
    expect(await hooks().claims(request({ account: ADMIN, entities: { AuthorizationCode: signIn } }), token)).toEqual(expected);
    expect(await hooks().claims(request({ account: ADMIN, entities: { RefreshToken: signIn } }), token)).toEqual(expected);
    // No user loaded (a client's own token): no claims of a user.
    expect(await hooks().claims(request({ entities: { AuthorizationCode: signIn } }), token)).toBeUndefined();
  });

  it("the token's scope: the OIDC scopes asked and allowed, then its API scopes; none at all leaves no scope", async () => {
    const customize = (payload: { scope?: string }, ctx: Parameters<typeof request>[0]) => {
      hooks().customizeJwt!(request(ctx), { accountId: 'ada' } as never, { payload } as never);
      return payload.scope;
    };
    const grant = (oidc: string) => ({ getOIDCScope: () => oidc });
    expect(customize({ scope: 'scim.read' }, { scope: 'openid email scim.read', entities: { Grant: grant('openid email') } })).toBe('openid email scim.read');
    expect(customize({}, { scope: 'openid', entities: { Grant: grant('openid') } })).toBe('openid');
    expect(customize({}, { scope: 'openid', entities: { Grant: grant('') } })).toBeUndefined();
    // At a refresh without `scope`: what the refresh token was given.
    expect(customize({ scope: 'scim.read' }, { entities: { RefreshToken: { scope: 'openid scim.read' }, Grant: grant('openid') } })).toBe('openid scim.read');
  });
});
