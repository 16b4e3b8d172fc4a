import { testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
import type { AuditEvent } from '../../src/index.js';

const PORTAL = 'https://portal.example/cb';
const WEB = 'https://app.example/cb';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` requests, `parallel` at a time; answers the statuses seen. */
async function flood(count: number, parallel: number, send: () => Promise<Response>): Promise<Set<number>> {
  const statuses = new Set<number>();
  let left = count;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (left > 0) {
      left -= 1;
      const response = await send();
      await response.arrayBuffer();
      statuses.add(response.status);
    }
  }));
  return statuses;
}

/**
 * Refusals can neither flood nor erase the audit trail (the third outside review): they are counted
 * per who, where and window and written at the 1st, 10th, 100th... of a window, in each tenant's
 * activity log, which is trimmed apart from its changes. Probes of other tenants' IDs and failed
 * sign-ins at a tenant's app are in that tenant's trail; cursors are the trail's own.
 */
describe.each(STORE_KINDS)('refusals in the audit trail (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let portal: { clientId: string; secret: string };
  const admin = { sub: 'admin', password: 'admin-password-1', tenant: 'acme', permissions: ['integration_setup'] };
  const globexAdmin = { sub: 'gadmin', password: 'gadmin-password-1', tenant: 'globex', permissions: ['integration_setup'] };
  const plain = { sub: 'plain', password: 'plain-password-1', tenant: 'acme' };
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    const option = store.option();
    server = await startServer({
      // 20,000 requests 32 at a time in this one process, beside another test worker: a Redis
      // command may wait past the default 500 ms for the event loop, and be answered 503 (what a
      // frozen store gets, tested elsewhere). This test is about what the trail keeps, not latency.
      store: option.type === 'redis' ? { ...option, commandTimeoutMs: 5_000 } : option,
      accounts: testAccounts([admin, globexAdmin, plain]),
      // The finding's setting: 110 refusals used to push a client's creation out of the trail.
      audit: { maxEventsPerTenant: 100 },
      rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 3, windowSeconds: 600 }, perAddress: { max: 1000, windowSeconds: 600 } } },
    });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    portal = { clientId: app.clientId, secret: app.clientSecret! };
    for (const user of [admin, globexAdmin, plain]) {
      const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, user, 'openid manage.integrations', new UserAgent(server.baseUrl));
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
      tokens.set(user.sub, response.body.access_token as string);
    }
  }, 60_000);
  afterAll(() => server.stop());

  const api = (path: string, init: { method?: string; body?: unknown; as?: string } = {}) => fetch(`${server.baseUrl}/api/oauth2/${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.as === 'nobody' ? {} : { authorization: `Bearer ${tokens.get(init.as ?? 'admin')}` }),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const json = async (response: Response) => (await response.json()) as Record<string, unknown>;

  /** Every event of a tenant (null: the platform's), newest first, read page by page. */
  async function everything(tenant: string | null, type?: AuditEvent['type']): Promise<AuditEvent[]> {
    const all: AuditEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await server.auth.audit.list({ tenant, limit: 7, ...(type ? { type } : {}), ...(cursor ? { cursor } : {}) });
      all.push(...page.events);
      cursor = page.next;
    } while (cursor);
    return all;
  }

  it('10,000 refusals of a user without the right and 10,000 anonymous ones: every change stays listed, a few events each', async () => {
    const created: string[] = [];
    for (const name of ['Payroll', 'Benefits', 'Travel']) {
      const answer = await api('client-configurations', { method: 'POST', body: { name, category: 'hr', resources: { scim: { scopes: ['scim.read'] } } } });
      expect(answer.status).toBe(201);
      created.push((await json(answer)).client_id as string);
    }
    expect((await api(`client-configurations/${created[2]}`, { method: 'DELETE' })).status).toBe(204);
    const changesBefore = (await everything('acme')).filter((event) => event.type.startsWith('client_configuration.'));
    expect(changesBefore).toHaveLength(4);

    expect(await flood(10_000, 32, () => api('client-configurations', { as: 'plain' }))).toEqual(new Set([403]));
    expect(await flood(10_000, 32, () => api('client-configurations', { as: 'nobody' }))).toEqual(new Set([401]));
    await sleep(300); // refusals are written without waiting

    const acme = await everything('acme');
    // Every change of the tenant is still there, in order, newest first.
    expect(acme.filter((event) => event.type.startsWith('client_configuration.')).map((event) => event.id)).toEqual(changesBefore.map((event) => event.id));
    const deniedAcme = acme.filter((event) => event.type === 'management.denied' && event.actor.id === 'plain');
    // The 1st, 10th, 100th, 1000th and 10,000th refusal of the window, each with its count.
    expect(deniedAcme.map((event) => event.details?.count)).toEqual([10_000, 1000, 100, 10, 1]);
    expect(deniedAcme[0]).toMatchObject({ tenant: 'acme', actor: { type: 'user', id: 'plain' }, target: { type: 'management_api', id: 'clientConfigurations' }, details: { status: 403, window_seconds: 300 } });
    const deniedAnonymous = (await everything(null, 'management.denied')).filter((event) => event.actor.type === 'anonymous');
    expect(deniedAnonymous.map((event) => event.details?.count)).toEqual([10_000, 1000, 100, 10, 1]);
    expect(deniedAnonymous[0]).toMatchObject({ address: '127.0.0.1', details: { status: 401, error: 'invalid_token' } });
  }, 180_000);

  it('activity past the cap goes, the oldest first; changes never do', async () => {
    const before = (await everything('acme')).filter((event) => event.type.startsWith('client_configuration.'));
    // 110 sign-ins: activity that is no refusal, each an event of its own.
    for (let n = 0; n < 110; n += 1) await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, plain, 'openid', new UserAgent(server.baseUrl));
    await sleep(300);
    const acme = await everything('acme');
    expect(acme.filter((event) => event.type.startsWith('client_configuration.')).map((event) => event.id)).toEqual(before.map((event) => event.id));
    const activity = acme.filter((event) => ['sign_in.succeeded', 'sign_in.failed', 'management.denied', 'session.ended'].includes(event.type));
    expect(activity).toHaveLength(100);
    expect(activity.every((event) => event.type === 'sign_in.succeeded')).toBe(true);
  }, 60_000);

  it('a probe of another tenant\'s IDs is a 404 recorded in the caller\'s tenant, like an ID that exists nowhere', async () => {
    const theirs = await server.auth.clientConfigurations.create({ tenant: 'globex', name: 'Theirs', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    const globexBefore = await everything('globex');
    for (const [method, path] of [['DELETE', ''], ['PATCH', ''], ['POST', '/secret'], ['GET', '']] as const) {
      for (const id of [theirs.clientId, '00000000-0000-4000-8000-000000000000']) {
        const answer = await api(`client-configurations/${id}${path}`, { method, as: 'admin', body: method === 'PATCH' ? { name: 'x' } : undefined });
        expect([method, answer.status]).toEqual([method, 404]);
      }
    }
    await sleep(300);
    const probes = (await everything('acme', 'management.denied')).filter((event) => event.actor.id === 'admin');
    // One event per route and method (the second ID is the same refusal of the same window).
    expect(probes.map((event) => `${event.details?.method} ${event.target?.id} ${event.details?.status} ${event.details?.count}`).sort()).toEqual([
      'DELETE clientConfiguration 404 1', 'GET clientConfiguration 404 1', 'PATCH clientConfiguration 404 1', 'POST clientConfigurationSecret 404 1',
    ]);
    // Nothing tells the caller's trail which ID exists elsewhere, and the other tenant sees nothing new.
    expect(JSON.stringify(probes)).not.toContain(theirs.clientId);
    expect((await everything('globex')).map((event) => event.id)).toEqual(globexBefore.map((event) => event.id));
    expect(await server.auth.clientConfigurations.get(theirs.clientId)).toMatchObject({ name: 'Theirs' });
  });

  it('failed and throttled sign-ins at a tenant\'s app are in that tenant\'s trail, once per address, app and window', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Acme web', redirectUris: [WEB], clientType: 'public', tenant: 'acme' });
    const agent = new UserAgent(server.baseUrl);
    const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
    let page = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 40; attempt += 1) {
      page = await agent.submit(page, { username: 'plain', password: `guess-${attempt}` });
      statuses.push(page.status);
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(new Set(statuses.slice(3))).toEqual(new Set([429]));
    await sleep(300);
    const failed = (await everything('acme', 'sign_in.failed')).filter((event) => event.target?.id === app.clientId);
    expect(failed.map((event) => `${event.details?.reason} ${event.details?.count}`)).toEqual([
      'throttled 10', 'throttled 1', 'wrong_credentials 1',
    ]);
    expect(failed[0]).toMatchObject({ tenant: 'acme', actor: { type: 'anonymous' }, address: '127.0.0.1' });
    expect((await everything(null, 'sign_in.failed')).filter((event) => event.target?.id === app.clientId)).toEqual([]);
  });

  it('pages through both logs newest first, each event once; a cursor it did not give is a 400', async () => {
    const all = await everything('acme');
    const whole = (await server.auth.audit.list({ tenant: 'acme', limit: 200 })).events;
    expect(all.map((event) => event.id)).toEqual(whole.map((event) => event.id));
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
    expect(all.map((event) => event.time)).toEqual([...all.map((event) => event.time)].sort().reverse());
    // Changes and activity interleave in the listing.
    expect(new Set(all.map((event) => event.type.startsWith('client_configuration.')))).toEqual(new Set([true, false]));

    const first = await json(await api('audit-events?limit=2'));
    const cursor = first.next as string;
    expect((await api(`audit-events?limit=2&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    const [body, mac] = cursor.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ changes: '0-0', activity: '0-0' })).toString('base64url')}.${mac}`;
    for (const bad of ['0-0', '1-1', `${body}.AAAAAAAAAAAAAAAAAAAAAA`, forged, `${cursor}.x`, 'x'.repeat(600), `${body}.`]) {
      const answer = await api(`audit-events?cursor=${encodeURIComponent(bad)}`);
      expect([bad.slice(0, 20), answer.status, (await json(answer)).error]).toEqual([bad.slice(0, 20), 400, 'invalid_request']);
    }
    // A cursor of one tenant is not one of another's, nor of another type filter.
    expect((await api(`audit-events?cursor=${encodeURIComponent(cursor)}`, { as: 'gadmin' })).status).toBe(400);
    expect((await api(`audit-events?type=consent.granted&cursor=${encodeURIComponent(cursor)}`)).status).toBe(400);
    await expect(server.auth.audit.list({ tenant: 'acme', cursor: '0-0' })).rejects.toThrow('cursor is not one this server gave');
    expect(server.logLines.filter((line) => /store error|engine error|"level":50/.test(line))).toEqual([]);
  });
});
