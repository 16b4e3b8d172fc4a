import { startServer, type RunningServer } from '../support/server.js';
import { testAccounts } from '../support/accounts.js';
import { passSecondFactor } from '../support/second-factor.js';
import { UserAgent } from '../support/user-agent.js';

/**
 * How the portal reads what a browser posts, over HTTP: the pages' one form reader
 * (src/http/forms.ts), the CSRF rule's Origin check (src/http/csrf.ts), and the app form's URI
 * inputs told apart by their position. (The rest of the portal: test/portal/portal.test.ts.)
 */

const ada = { sub: 'ada', password: 'ada-password', tenant: 'acme', claims: { name: 'Ada' }, permissions: ['integration_setup'] };

describe('what the portal reads of a POST', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([ada]), portal: { enabled: true } });
  });
  afterAll(() => server.stop());

  async function signedIn(): Promise<{ agent: UserAgent; csrf: string }> {
    const agent = new UserAgent(server.baseUrl);
    let step = await agent.submit(await agent.request('/portal/login'), { username: 'ada', password: 'ada-password' });
    step = await passSecondFactor(agent, step, server.baseUrl, 'ada');
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    return { agent, csrf: /name="csrf" value="([^"]+)"/.exec(step.html)![1]! };
  }
  const names = async () => (await server.auth.clientConfigurations.list('acme')).map((client) => client.name);

  it('a form of another media type: 415, nothing sent on', async () => {
    const { agent, csrf } = await signedIn();
    const step = await agent.request('/portal/client-configurations', {
      method: 'POST', headers: { 'content-type': 'text/plain' }, body: new URLSearchParams({ csrf, name: 'Typed', category: 'c', scope: 'scim.read' }).toString(),
    });
    expect(step.status).toBe(415);
    expect(step.html).toContain('role="alert"');
    expect(await names()).not.toContain('Typed');
  });

  it('a field given twice that may not repeat, or a malformed escape: 400, nothing sent on; the scope list repeats', async () => {
    const { agent, csrf } = await signedIn();
    const twice = await agent.request('/portal/client-configurations', { method: 'POST', body: `csrf=${csrf}&name=One&name=Two&category=c&scope=scim.read` });
    expect(twice.status).toBe(400);
    expect(twice.html).toContain('role="alert"');
    const malformed = await agent.request('/portal/client-configurations', { method: 'POST', body: `csrf=${csrf}&name=%E0%A4%A&category=c&scope=scim.read` });
    expect(malformed.status).toBe(400);
    expect(await names()).toEqual([]);
    const scopes = await agent.request('/portal/client-configurations', { method: 'POST', body: `csrf=${csrf}&name=Both&category=c&scope=scim.read&scope=scim.write` });
    expect(scopes.url).toBe(`${server.baseUrl}/portal/secret`);
    const [both] = await server.auth.clientConfigurations.list('acme');
    expect(both!.resources).toEqual({ scim: { scopes: ['scim.read', 'scim.write'] } });
    await server.auth.clientConfigurations.delete(both!.clientId);
  });

  it('a form without this session\'s CSRF token, or from another origin: 403, nothing sent on', async () => {
    const { agent, csrf } = await signedIn();
    const other = await signedIn();
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) => agent.request('/portal/client-configurations', {
      method: 'POST', headers, body: new URLSearchParams({ name: 'Forged', category: 'c', scope: 'scim.read', ...fields }).toString(),
    });
    for (const step of [await post({}), await post({ csrf: '' }), await post({ csrf: 'wrong' }), await post({ csrf: other.csrf }), await post({ csrf }, { origin: 'http://evil.example' })]) {
      expect(step.status).toBe(403);
      expect(step.html).toContain('Your portal session has expired or the request did not come from its page.');
    }
    expect(await names()).toEqual([]);
  });

  it('Origin: null goes on only when the browser says the form is same-origin (Sec-Fetch-Site)', async () => {
    const { agent, csrf } = await signedIn();
    const post = (site: string) => agent.request('/portal/sign-ins/unlock', {
      method: 'POST', headers: { origin: 'null', 'sec-fetch-site': site }, body: new URLSearchParams({ csrf, username: 'nobody' }).toString(),
    });
    expect((await post('cross-site')).status).toBe(403);
    const same = await post('same-origin');
    expect(same.url).toBe(`${server.baseUrl}/portal`);
    expect(same.html).toContain('Nothing to unlock');
  });

  it('"Add another" keeps every URI input, empty ones too, and a refused URI is said at the input it was typed in', async () => {
    const { agent, csrf } = await signedIn();
    const form = (fields: Array<[string, string]>) => new URLSearchParams([['csrf', csrf], ['name', 'Gaps'], ['client_type', 'public'], ...fields]).toString();
    const more = await agent.request('/portal/app-registrations', { method: 'POST', body: form([['redirect_uri', ''], ['more', 'redirect']]) });
    expect(more.status).toBe(200);
    expect([...more.html.matchAll(/id="(redirect-\d+)" name="redirect_uri"/g)].map((match) => match[1])).toEqual(['redirect-0', 'redirect-1']);
    const refused = await agent.request('/portal/app-registrations', { method: 'POST', body: form([['redirect_uri', ''], ['redirect_uri', 'http://gaps.example/plain']]) });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('<p class="field-error" id="redirect-1-error">&quot;http://gaps.example/plain&quot; plain http is allowed only for');
    expect(refused.html).toContain('id="redirect-0" name="redirect_uri" value=""');
    expect(await server.auth.appRegistrations.list()).toEqual([expect.objectContaining({ name: 'Developer portal' })]);
  });
});
