import { alice, testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';
import { accentColorProblem, contrastWithWhite, type Branding } from '../../src/pages/branding.js';
import type { AuthServerOptions } from '../../src/index.js';

/**
 * Branding per tenant: the product name in the title and heading, the logo (alt: the product name,
 * CSP img-src for exactly its origin), the accent colour (WCAG AA against white or refused).
 */

const WEB = 'https://app.example.com/cb';
const ACME: Branding = { productName: 'Acme HR', logoUrl: 'https://cdn.acme.example/brand/logo.svg', accentColor: '#0B5D1E' };

const titleOf = (html: string): string | undefined => /<title>([^<]*)<\/title>/.exec(html)?.[1];
const headingOf = (html: string): string | undefined => /<h1>(.*?)<\/h1>/s.exec(html)?.[1];

function authorizeQuery(clientId: string, extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: WEB, scope: 'openid scim.read', state: 's',
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...extra,
  }).toString();
}

describe('branding per tenant', () => {
  let server: RunningServer;
  let calls: Array<string | undefined>;
  const apps: Record<string, { clientId: string }> = {};

  beforeAll(async () => {
    calls = [];
    server = await startServer({
      accounts: testAccounts([alice]),
      branding: async (tenant) => {
        calls.push(tenant);
        if (tenant === 'acme') return ACME;
        // Too light for white text (1.07:1), and a logo over plain http: both left out.
        if (tenant === 'globex') return { productName: 'Globex Careers', accentColor: '#ffff00', logoUrl: 'http://cdn.globex.example/logo.png' };
        if (tenant === 'initech') throw new Error('the branding service is down');
        if (tenant === undefined) return { productName: 'Talent Platform', logoUrl: '/static/logo.svg' };
        return undefined;
      },
    });
    for (const tenant of ['acme', 'globex', 'initech', 'umbrella']) {
      apps[tenant] = await server.auth.appRegistrations.create({ name: `${tenant} app`, tenant, redirectUris: [WEB], clientType: 'public' });
    }
    apps.platform = await server.auth.appRegistrations.create({ name: 'Platform app', redirectUris: [WEB], clientType: 'public' });
  });
  afterAll(() => server.stop());


  /** The sign-in page of an app, with its CSP header. */
  async function signInPage(app: string, extra: Record<string, string> = {}): Promise<{ html: string; csp: string; agent: UserAgent; step: Step }> {
    const agent = new UserAgent(server.baseUrl);
    // The last hop (the interaction page) is fetched again to read its headers.
    const step = await agent.request(`${server.oauthUrl}/authorize?${authorizeQuery(apps[app]!.clientId, extra)}`);
    const again = await fetchWithCookies(agent, step.url);
    return { html: again.html, csp: again.csp, agent, step };
  }

  async function fetchWithCookies(agent: UserAgent, url: string): Promise<{ html: string; csp: string }> {
    const cookie = (agent as unknown as { cookieHeader(): string }).cookieHeader();
    const response = await fetch(url, { headers: { cookie } });
    return { html: await response.text(), csp: response.headers.get('content-security-policy') ?? '' };
  }

  it("a tenant's app: product name in title and heading, the logo with its alt, the colour, img-src for the logo's origin only", async () => {
    const { html, csp } = await signInPage('acme');
    expect(titleOf(html)).toBe('Sign in to Acme HR');
    expect(headingOf(html)).toBe('Sign in to Acme HR');
    expect(html).toContain('<img src="https://cdn.acme.example/brand/logo.svg" alt="Acme HR" height="40">');
    expect(html).toContain('.primary{background:#0b5d1e}');
    expect(csp).toContain('img-src https://cdn.acme.example;');
    expect(csp).toMatch(/^default-src 'none'; style-src 'nonce-[^']+'; img-src https:\/\/cdn\.acme\.example; form-action 'self' https:\/\/app\.example\.com; frame-ancestors 'none'; base-uri 'none'$/);
  });

  it('the branding in the user\'s language', async () => {
    const { html } = await signInPage('acme', { ui_locales: 'de' });
    expect(titleOf(html)).toBe('Bei Acme HR anmelden');
    const fr = await signInPage('acme', { ui_locales: 'fr' });
    expect(titleOf(fr.html)).toBe('Se connecter à Acme HR');
  });

  it("another tenant's app: not Acme's branding; its bad colour and http logo left out, with one warning", async () => {
    for (let i = 0; i < 2; i += 1) {
      const { html, csp } = await signInPage('globex');
      expect(html).not.toContain('Acme');
      expect(titleOf(html)).toBe('Sign in to Globex Careers');
      expect(html).not.toContain('#ffff00');
      expect(html).not.toContain('<img');
      expect(csp).not.toContain('img-src');
    }
    const warnings = server.logLines.filter((line) => line.includes('"level":"warn"') && line.includes('globex'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('accentColor');
    expect(warnings[0]).toContain('logoUrl');
  });

  it('a branding function that throws: the default look, a warning, never an error page', async () => {
    const { html, csp } = await signInPage('initech');
    expect(titleOf(html)).toBe('Sign in');
    expect(csp).not.toContain('img-src');
    expect(server.logLines.some((line) => line.includes('"level":"warn"') && line.includes('initech'))).toBe(true);
  });

  it('no branding for a tenant: the default look', async () => {
    const { html } = await signInPage('umbrella');
    expect(titleOf(html)).toBe('Sign in');
    expect(html).not.toContain('class="brand"');
  });

  it("the platform's own apps: the function gets undefined; a same-origin logo is img-src 'self'", async () => {
    calls.length = 0;
    const { html, csp } = await signInPage('platform');
    expect(calls).toContain(undefined);
    expect(titleOf(html)).toBe('Sign in to Talent Platform');
    expect(html).toContain('<img src="/static/logo.svg" alt="Talent Platform" height="40">');
    expect(csp).toContain("img-src 'self';");
  });

  it("the consent and sign-out pages of a tenant's app are branded too", async () => {
    const agent = new UserAgent(server.baseUrl);
    const login = await agent.request(`${server.oauthUrl}/authorize?${authorizeQuery(apps.acme!.clientId, { ui_locales: 'de' })}`);
    const consent = await agent.submit(login, { username: alice.sub, password: alice.password });
    expect(titleOf(consent.html)).toBe('Zugriff erlauben? – Acme HR');
    expect(consent.html).toContain('alt="Acme HR"');
    const back = await agent.submit(consent, { decision: 'allow' });
    expect(back.location).toMatch(/code=/);
    const signOut = await agent.request(`${server.oauthUrl}/session/end?client_id=${apps.acme!.clientId}&ui_locales=de`);
    expect(titleOf(signOut.html)).toBe('Abmelden – Acme HR');
    expect(signOut.html).toContain('alt="Acme HR"');
    expect(signOut.html).toContain('.primary{background:#0b5d1e}');
  });

  it('error pages without an app are not branded', async () => {
    const page = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${authorizeQuery('no-such-app')}`);
    expect(page.status).toBe(400);
    expect(page.html).not.toContain('class="brand"');
  });
});

describe('branding options checked at start', () => {
  it('a static branding applies to every app', async () => {
    const server = await startServer({ accounts: testAccounts([alice]), branding: { productName: 'Talent', accentColor: '#1f5fcf' } });
    try {
      const app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'public' });
      const page = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${authorizeQuery(app.clientId)}`);
      expect(titleOf(page.html)).toBe('Sign in to Talent');
    } finally {
      await server.stop();
    }
  });

  it.each<[string, Branding, string]>([
    ['yellow (1.07:1)', { accentColor: '#ffff00' }, 'branding.accentColor: #ffff00 has a contrast of 1.07:1'],
    ['a mid grey just below 4.5:1', { accentColor: '#777777' }, 'branding.accentColor: #777777 has a contrast of 4.48:1'],
    ['a named colour', { accentColor: 'red' }, 'branding.accentColor: must be a colour like #1f5fcf'],
    ['a short hex colour', { accentColor: '#00f' }, 'branding.accentColor: must be a colour like'],
    ['a logo over http', { logoUrl: 'http://cdn.example.com/logo.png' }, 'branding.logoUrl: must be https'],
    ['a script URL', { logoUrl: 'javascript:alert(1)' }, 'branding.logoUrl: must be https'],
    ['a protocol-relative URL', { logoUrl: '//cdn.example.com/logo.png' }, 'branding.logoUrl'],
    ['a data URL', { logoUrl: 'data:image/png;base64,AAAA' }, 'branding.logoUrl'],
    ['a host that writes into the CSP', { logoUrl: 'https://a.b;img-src*;script-src*/logo.png' }, 'branding.logoUrl: must name a plain host'],
    ['a host with a star', { logoUrl: 'https://*.example.com/logo.png' }, 'branding.logoUrl: must name a plain host'],
    ['a host with a quote', { logoUrl: "https://a'b.example/logo.png" }, 'branding.logoUrl: must name a plain host'],
    ['an IPv6 literal', { logoUrl: 'https://[::1]/logo.png' }, 'branding.logoUrl: must name a plain host'],
    ['an empty product name', { productName: ' ' }, 'branding.productName'],
  ])('refused: %s', async (_name, branding, message) => {
    await expect(startServer({ branding })).rejects.toThrow(message);
  });

  it('an unknown field and a non-function are refused', async () => {
    await expect(startServer({ branding: { colour: '#000000' } as never })).rejects.toThrow('branding');
    await expect(startServer({ branding: 'acme' as unknown as AuthServerOptions['branding'] })).rejects.toThrow('branding');
  });

  it('contrast: the rule in numbers', () => {
    expect(contrastWithWhite('#000000')).toBeCloseTo(21, 5);
    expect(contrastWithWhite('#ffffff')).toBeCloseTo(1, 5);
    expect(accentColorProblem('#1f5fcf')).toBeUndefined();
    expect(accentColorProblem('#767676')).toBeUndefined(); // 4.54:1, the lightest grey that passes
    expect(accentColorProblem('#777777')).toMatch(/4\.48:1/);
  });
});
