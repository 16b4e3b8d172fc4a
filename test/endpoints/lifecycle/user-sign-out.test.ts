import type { Store } from '../../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../../src/audit/trail.js';
import { ApiCatalog } from '../../../policies/catalog.js';
import { SignedInThroughStore } from '../../../src/federation/signed-in-through.js';
import { UserSignOut } from '../../../src/records/user-sign-out.js';
import { Consents } from '../../../src/records/consents.js';
import { Sealer } from '../../../src/records/sealed.js';
import { SignedOutUsers } from '../../../src/records/signed-out-users.js';
import { testAccounts } from '../../support/accounts.js';
import { useAdapterStore } from '../../support/adapter-stores.js';
import { capturingLogger } from '../../support/fixtures.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, type UserAgent } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';

/**
 * "The user left" (`auth.users.signOut`, src/records/user-sign-out.ts) over HTTP on both
 * stores: her refresh tokens stop, her browser session no longer gives a code without signing in
 * (`prompt=none`: login_required), another user's keep working, the same `sub` named in another
 * tenant ends nothing of hers; audited; she can sign in again afterwards.
 */
describe.each(STORE_KINDS)('a user signed out everywhere (%s store)', (kind) => {
  const handle = useStore(kind);
  let server: RunningServer;
  let app: { clientId: string; clientSecret: string };
  const amy = { sub: 'amy', password: 'amy-pw', tenant: 'acme' };
  const ben = { sub: 'ben', password: 'ben-pw', tenant: 'acme' };

  beforeAll(async () => {
    server = await startServer({ store: handle.option(), accounts: testAccounts([amy, ben]) });
    const created = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    app = { clientId: created.clientId, clientSecret: created.clientSecret! };
  });
  afterAll(() => server.stop());

  const auth = () => ({ authorization: basic(app.clientId, app.clientSecret) });
  /** Signs in with the password and consents: her browser (its session) and her refresh token. */
  async function signedIn(user: { sub: string; password: string }) {
    const { code, verifier, agent } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, user, 'openid scim.read');
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, auth());
    expect(tokens.status).toBe(200);
    return { agent, refreshToken: tokens.body.refresh_token as string };
  }
  const refresh = (refreshToken: string) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken }, auth());
  /** An authorization request of her browser without any page (`prompt=none`): where it went back to the app. */
  async function silently(agent: UserAgent): Promise<URL> {
    const query = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid scim.read', state: 's', prompt: 'none',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    const step = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    expect(step.location).toBeDefined();
    return new URL(step.location!);
  }

  it('ends her sessions and grants at once; another user keeps hers; the same sub of another tenant ends nothing', async () => {
    const her = await signedIn(amy);
    const his = await signedIn(ben);
    expect((await silently(her.agent)).searchParams.get('code')).toBeTruthy();

    // The same sub named in another tenant is someone else: nothing of hers ends.
    await expect(server.auth.users.signOut({ tenant: 'globex', sub: 'amy' })).resolves.toEqual({ grantsEnded: 0 });
    expect((await silently(her.agent)).searchParams.get('code')).toBeTruthy();
    const stillHers = await refresh(her.refreshToken);
    expect(stillHers.status).toBe(200);

    await expect(server.auth.users.signOut({ tenant: 'acme', sub: 'amy', actor: 'hr-sync' })).resolves.toEqual({ grantsEnded: 1 });
    expect((await refresh(stillHers.body.refresh_token as string)).body.error).toBe('invalid_grant');
    const back = await silently(her.agent);
    expect(back.searchParams.get('error')).toBe('login_required');
    expect(back.searchParams.get('code')).toBeNull();
    // Without prompt=none: the password page again, not a code.
    const query = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid scim.read', state: 's',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    const page = await her.agent.request(`${server.oauthUrl}/authorize?${query}`);
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('name="password"');

    // His session and refresh token go on.
    expect((await silently(his.agent)).searchParams.get('code')).toBeTruthy();
    expect((await refresh(his.refreshToken)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 100));
    const { events } = await server.auth.audit.list({ tenant: 'acme' });
    expect(events.find((event) => event.type === 'user.signed_out')).toMatchObject({ tenant: 'acme', actor: { type: 'operator', id: 'hr-sync' }, target: { type: 'user', id: 'amy' } });
    expect(events.find((event) => event.type === 'consent.revoked')).toMatchObject({ details: expect.objectContaining({ reason: 'user_signed_out' }) });
    const globex = await server.auth.audit.list({ tenant: 'globex' });
    expect(globex.events.filter((event) => event.type === 'user.signed_out')).toHaveLength(1);
  });

  it('she can sign in again afterwards, and that session lasts', async () => {
    await signedIn(amy);
    await server.auth.users.signOut({ tenant: 'acme', sub: 'amy' });
    // A sign-in in a later second than the mark (sessions count whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const again = await signedIn(amy);
    expect((await silently(again.agent)).searchParams.get('code')).toBeTruthy();
    expect((await refresh(again.refreshToken)).status).toBe(200);
  });

  it('refuses bad input with the field named', async () => {
    await expect(server.auth.users.signOut({ tenant: '', sub: 'amy' })).rejects.toMatchObject({ name: 'ValidationError', field: 'tenant' });
    await expect(server.auth.users.signOut({ tenant: 'acme', sub: 'x'.repeat(300) })).rejects.toMatchObject({ name: 'ValidationError', field: 'sub' });
    await expect(server.auth.users.signOut({ tenant: 'acme', sub: 'amy', actor: '' })).rejects.toMatchObject({ name: 'ValidationError', field: 'actor' });
    await expect(server.auth.users.signOut(undefined as never)).rejects.toMatchObject({ name: 'ValidationError' });
  });
});

/** The parts of it that no HTTP answer shows, on both stores: the provider she signed in through forgotten, the mark bounded. */
describe.each(STORE_KINDS)('UserSignOut (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let events: AuditEvent[];
  let through: SignedInThroughStore;
  let marks: SignedOutUsers;
  let signOut: UserSignOut;

  beforeEach(async () => {
    store = await handle.create();
    events = [];
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event));
    through = new SignedInThroughStore(store, new Sealer(['k'], 'connections'), 3600);
    marks = new SignedOutUsers(store, 3600);
    signOut = new UserSignOut({ audit, consents: new Consents(store, new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'Read users' }, constraints: [] }]), audit), signedOutUsers: marks, signedInThrough: through, now: () => 1_700_000_000_500 });
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  it('forgets the provider she last signed in through, marks her (and nobody else) signed out', async () => {
    const amy = { tenant: 'acme', sub: 'amy' };
    await through.remember(amy, { connectionId: 'c1', idToken: 'header.payload.signature', at: 1 });
    await through.remember({ tenant: 'globex', sub: 'amy' }, { connectionId: 'c2', idToken: 'h.p.s', at: 1 });
    await signOut.signOut(amy);
    expect(await through.of(amy)).toBeUndefined();
    expect(await through.of({ tenant: 'globex', sub: 'amy' })).toMatchObject({ connectionId: 'c2' });
    expect(await marks.at(amy)).toBe(1_700_000_000_500);
    expect(await marks.at({ tenant: 'globex', sub: 'amy' })).toBeUndefined();
    expect(events.map((event) => event.type)).toEqual(['user.signed_out']);
  });
});
