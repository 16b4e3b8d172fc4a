import { testAccounts } from '../support/accounts.js';
import { passSecondFactor } from '../support/second-factor.js';
import { startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';

/**
 * The portal's CSRF token over HTTP, on both stores (the token is kept in the server-side
 * session): a POST from our own origin (its `Origin` header right) but without this session's
 * token is refused, and changes nothing. The Origin alone never lets a form through.
 */

const ada = { sub: 'ada', password: 'ada-password', tenant: 'acme', claims: { name: 'Ada' }, permissions: ['integration_setup'] };
const REFUSED = 'Your portal session has expired or the request did not come from its page.';

describe.each(STORE_KINDS)('the portal\'s CSRF token, with the right Origin (%s store)', (kind) => {
  const handle = useStore(kind);
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([ada]), portal: { enabled: true }, store: handle.option() });
  });
  afterAll(() => server.stop());

  async function signedIn(): Promise<{ agent: UserAgent; csrf: string }> {
    const agent = new UserAgent(server.baseUrl);
    let step = await agent.submit(await agent.request('/portal/login'), { username: 'ada', password: 'ada-password' });
    step = await passSecondFactor(agent, step, server.baseUrl, 'ada');
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    return { agent, csrf: /name="csrf" value="([^"]+)"/.exec(step.html)![1]! };
  }
  /** A POST with our own origin stated outright (not left to the agent's default). */
  const post = (agent: UserAgent, path: string, fields: Record<string, string>) => agent.request(`/portal${path}`, {
    method: 'POST', headers: { origin: server.baseUrl }, body: new URLSearchParams(fields).toString(),
  });
  const names = async () => (await server.auth.clientConfigurations.list('acme')).map((client) => client.name).sort();
  /** Tokens that are not this session's: none, empty, made up, another session's of the same user. */
  async function wrongTokens(): Promise<Array<Record<string, string>>> {
    const other = await signedIn();
    return [{}, { csrf: '' }, { csrf: 'wrong' }, { csrf: other.csrf }];
  }

  it('a form without this session\'s token is refused (403), nothing created; with it, the same form goes on', async () => {
    const { agent, csrf } = await signedIn();
    const before = await names();
    for (const token of await wrongTokens()) {
      const step = await post(agent, '/client-configurations', { ...token, name: 'Forged', category: 'c', scope: 'scim.read' });
      expect(step.status).toBe(403);
      expect(step.html).toContain(REFUSED);
    }
    expect(await names()).toEqual(before);
    // The same Origin with the right token is let through: the refusals above were the token's.
    const made = await post(agent, '/client-configurations', { csrf, name: 'Made', category: 'c', scope: 'scim.read' });
    expect(made.url).toBe(`${server.baseUrl}/portal/secret`);
    expect(await names()).toEqual([...before, 'Made'].sort());
  });

  it('a delete or a sign-out without this session\'s token is refused (403): the record and the session stay', async () => {
    const { agent, csrf } = await signedIn();
    await post(agent, '/client-configurations', { csrf, name: 'Kept', category: 'c', scope: 'scim.read' });
    const kept = (await server.auth.clientConfigurations.list('acme')).find((client) => client.name === 'Kept')!;
    for (const token of await wrongTokens()) {
      const deleted = await post(agent, `/client-configurations/${kept.clientId}/delete`, token);
      expect(deleted.status).toBe(403);
      expect(deleted.html).toContain(REFUSED);
      const loggedOut = await post(agent, '/logout', token);
      expect(loggedOut.status).toBe(403);
      expect(loggedOut.html).toContain(REFUSED);
    }
    expect(await server.auth.clientConfigurations.get(kept.clientId)).toEqual(kept);
    // Still signed in, in the same session (its token unchanged).
    const home = await agent.request('/portal');
    expect(home.status).toBe(200);
    expect(home.html).toContain(`name="csrf" value="${csrf}"`);
  });
});
