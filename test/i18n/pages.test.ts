import { alice, testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';
import type { AuthServerOptions } from '../../src/index.js';

/**
 * The user-facing pages in the user's language: English, German and French, chosen by the
 * request's ui_locales, then the browser's Accept-Language, then English; a host's texts on top.
 */

const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out';

/** A catalog with words per language for one scope and English words only for the other. */
const apis: AuthServerOptions['apis'] = [
  {
    id: 'scim',
    name: 'User provisioning',
    scopes: {
      'scim.read': { en: 'Read users and groups', de: 'Benutzer und Gruppen lesen', fr: 'Lire les utilisateurs et les groupes' },
      'scim.write': 'Create and update users and groups',
    },
  },
];

const langOf = (html: string): string | undefined => /<html lang="([^"]+)">/.exec(html)?.[1];
const titleOf = (html: string): string | undefined => /<title>([^<]*)<\/title>/.exec(html)?.[1];
const headingOf = (html: string): string | undefined => /<h1>(.*?)<\/h1>/s.exec(html)?.[1];

function authorizeQuery(clientId: string, extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: WEB, scope: 'openid scim.read scim.write', state: 's',
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...extra,
  }).toString();
}

describe('pages in the user\'s language', () => {
  let server: RunningServer;
  let app: { clientId: string };

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]), apis });
    app = await server.auth.appRegistrations.create({ name: 'Team Web', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'public' });
  });
  afterAll(() => server.stop());

  const agent = (acceptLanguage?: string) => new UserAgent(server.baseUrl, acceptLanguage ? { 'accept-language': acceptLanguage } : {});
  const authorize = (ua: UserAgent, extra: Record<string, string> = {}) => ua.request(`${server.oauthUrl}/authorize?${authorizeQuery(app.clientId, extra)}`);

  async function consentPage(ua: UserAgent, extra: Record<string, string> = {}): Promise<Step> {
    const login = await authorize(ua, extra);
    return ua.submit(login, { username: alice.sub, password: alice.password });
  }

  describe('the sign-in page', () => {
    it('German by ui_locales', async () => {
      const page = await authorize(agent(), { ui_locales: 'de' });
      expect(page.status).toBe(200);
      expect(langOf(page.html)).toBe('de');
      expect(titleOf(page.html)).toBe('Anmelden');
      expect(page.html).toContain('<label for="username">Benutzername</label>');
      expect(page.html).toContain('<label for="password">Passwort</label>');
      expect(page.html).toContain('um mit <strong>Team Web</strong> fortzufahren');
      expect(page.html).toContain('<button type="submit" class="primary">Anmelden</button>');
    });

    it('French by ui_locales: the first language we have wins, before Accept-Language', async () => {
      const page = await authorize(agent('de'), { ui_locales: 'nl fr-CA de' });
      expect(langOf(page.html)).toBe('fr');
      expect(titleOf(page.html)).toBe('Se connecter');
      expect(page.html).toContain('Nom d&#39;utilisateur');
    });

    it('by Accept-Language (q-values, de-CH is German)', async () => {
      const fr = await authorize(agent('en;q=0.3, fr-FR;q=0.9, de;q=0.5'));
      expect(langOf(fr.html)).toBe('fr');
      expect(fr.html).toContain('Mot de passe');
      const de = await authorize(agent('de-CH'));
      expect(langOf(de.html)).toBe('de');
      expect(de.html).toContain('Passwort');
    });

    it('English by default, for unknown languages and for malformed headers', async () => {
      for (const [ua, extra] of [
        [agent(), {}], [agent('ja, zh;q=0.8'), {}], [agent(), { ui_locales: 'nl' }], [agent(';;q=x,,'), {}],
      ] as Array<[UserAgent, Record<string, string>]>) {
        const page = await authorize(ua, extra);
        expect(page.status).toBe(200);
        expect(langOf(page.html)).toBe('en');
        expect(titleOf(page.html)).toBe('Sign in');
        expect(page.html).toContain('<label for="password">Password</label>');
      }
    });

    it('a wrong password: the error in the sign-in\'s language', async () => {
      const ua = agent();
      const login = await authorize(ua, { ui_locales: 'de' });
      const wrong = await ua.submit(login, { username: alice.sub, password: 'nope' });
      expect(wrong.status).toBe(401);
      expect(langOf(wrong.html)).toBe('de');
      expect(wrong.html).toContain('Benutzername oder Passwort ist falsch.');
      // The username typed is kept in the field, never elsewhere (and never in the log).
      expect(server.logLines.join('\n')).not.toContain('"nope"');
    });
  });

  describe('the consent page', () => {
    it('German by ui_locales, with the scopes\' German words (English where the catalog has none)', async () => {
      const page = await consentPage(agent(), { ui_locales: 'de' });
      expect(langOf(page.html)).toBe('de');
      expect(titleOf(page.html)).toBe('Zugriff erlauben?');
      expect(headingOf(page.html)).toBe('Möchten Sie <strong>Team Web</strong> den Zugriff auf Ihr Konto erlauben?');
      expect(page.html).toContain('Registriert von der Plattform');
      expect(page.html).toContain('<li>Wissen, wer Sie sind (Ihre Benutzerkennung)</li>');
      expect(page.html).toContain('<li>User provisioning: Benutzer und Gruppen lesen</li>');
      // A scope she does not hold is not listed, in any language.
      expect(page.html).not.toContain('Create and update users and groups');
      expect(page.html).not.toContain('nicht verfügbar');
      expect(page.html).toContain('value="allow" class="primary">Erlauben</button>');
      expect(page.html).toContain('value="deny" class="secondary">Ablehnen</button>');
    });

    it('French by Accept-Language', async () => {
      const page = await consentPage(agent('fr-BE, en;q=0.5'));
      expect(langOf(page.html)).toBe('fr');
      expect(page.html).toContain('<li>User provisioning: Lire les utilisateurs et les groupes</li>');
      expect(page.html).toContain('Enregistrée par la plateforme');
      expect(page.html).toContain('>Autoriser</button>');
      expect(page.html).toContain('>Refuser</button>');
    });

    it('English by default, with the English words of the object form', async () => {
      const page = await consentPage(agent());
      expect(langOf(page.html)).toBe('en');
      expect(page.html).toContain('<li>User provisioning: Read users and groups</li>');
      expect(page.html).toContain('Registered by the platform');
    });

    it('the consent API keeps English words', async () => {
      const { scopeWords } = await import('../../src/pages/scope-words.js');
      const { ApiCatalog } = await import('../../policies/catalog.js');
      const { resolveOptions } = await import('../../src/options.js');
      const catalog = new ApiCatalog(resolveOptions({ baseUrl: 'http://localhost', apis }).apis);
      expect(scopeWords(catalog, 'scim.read')).toEqual({ api: 'User provisioning', description: 'Read users and groups' });
      expect(catalog.scopeWords('scim.read', 'de-AT')).toBe('Benutzer und Gruppen lesen');
      expect(catalog.scopeWords('scim.write', 'de')).toBe('Create and update users and groups');
    });
  });

  describe('the sign-out pages', () => {
    async function signedIn(ua: UserAgent): Promise<void> {
      const consent = await consentPage(ua);
      // Alice may have allowed the app in an earlier test: then no consent page.
      const back = consent.html.includes('value="allow"') ? await ua.submit(consent, { decision: 'allow' }) : consent;
      expect(back.location).toMatch(/^https:\/\/app\.example\.com\/cb\?code=/);
    }

    it('the confirmation in French by ui_locales, then "signed out" in German by Accept-Language', async () => {
      const ua = agent('de');
      await signedIn(ua);
      const confirm = await ua.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ client_id: app.clientId, ui_locales: 'fr' })}`);
      expect(confirm.status).toBe(200);
      expect(langOf(confirm.html)).toBe('fr');
      expect(titleOf(confirm.html)).toBe('Se déconnecter');
      expect(confirm.html).toContain('<strong>Team Web</strong> vous demande de vous déconnecter.');
      expect(confirm.html).toContain('>Se déconnecter</button>');
      const done = await ua.submit(confirm, {});
      expect(done.status).toBe(200);
      expect(langOf(done.html)).toBe('de');
      expect(headingOf(done.html)).toBe('Sie sind abgemeldet');
      expect(done.html).toContain('Sie können dieses Fenster jetzt schließen.');
    });

    it('the confirmation in German by Accept-Language; English by default', async () => {
      const de = agent('de-DE,de;q=0.9');
      await signedIn(de);
      const page = await de.request(`${server.oauthUrl}/session/end?client_id=${app.clientId}`);
      expect(langOf(page.html)).toBe('de');
      expect(page.html).toContain('<h1>Abmelden</h1>');
      const en = agent();
      await signedIn(en);
      const english = await en.request(`${server.oauthUrl}/session/end?client_id=${app.clientId}`);
      expect(langOf(english.html)).toBe('en');
      expect(english.html).toContain('<h1>Sign out</h1>');
    });

    it('not signed in: the page with a button, in the request\'s language', async () => {
      const page = await agent().request(`${server.oauthUrl}/session/end?${new URLSearchParams({
        client_id: app.clientId, post_logout_redirect_uri: SIGNED_OUT, ui_locales: 'de',
      })}`);
      expect(page.status).toBe(200);
      expect(langOf(page.html)).toBe('de');
      expect(headingOf(page.html)).toBe('Sie sind nicht angemeldet');
      expect(page.html).toContain('um zu <strong>Team Web</strong> zurückzukehren');
      expect(page.html).toContain('>Weiter</button>');
      const fr = await agent('fr').request(`${server.oauthUrl}/session/end`);
      expect(langOf(fr.html)).toBe('fr');
      expect(headingOf(fr.html)).toBe('Vous n’êtes pas connecté');
    });
  });

  describe('error pages', () => {
    it('the engine\'s error page (unknown app) by ui_locales and by Accept-Language', async () => {
      const query = authorizeQuery('no-such-app', { ui_locales: 'de' });
      const de = await agent().request(`${server.oauthUrl}/authorize?${query}`);
      expect(de.status).toBe(400);
      expect(langOf(de.html)).toBe('de');
      expect(headingOf(de.html)).toBe('Die Anmeldung kann nicht fortgesetzt werden');
      // The engine's technical description stays English, marked as such.
      expect(de.html).toContain('Details: <span lang="en"><strong>invalid_client</strong>');
      const fr = await agent('fr').request(`${server.oauthUrl}/authorize?${authorizeQuery('no-such-app')}`);
      expect(langOf(fr.html)).toBe('fr');
      expect(fr.html).toContain('La connexion ne peut pas se poursuivre');
      const en = await agent().request(`${server.oauthUrl}/authorize?${authorizeQuery('no-such-app')}`);
      expect(langOf(en.html)).toBe('en');
      expect(en.html).toContain('Sign-in cannot continue');
      expect(en.html).toContain('<strong>invalid_client</strong>');
    });

    it('the sign-in pages\' own errors (expired sign-in, 405, 415) by Accept-Language', async () => {
      const expired = await agent('fr').request(`${server.oauthUrl}/interaction/not-a-sign-in`);
      expect(expired.status).toBe(400);
      expect(langOf(expired.html)).toBe('fr');
      expect(expired.html).toContain('Cette connexion a expiré ou est déjà terminée.');
      const method = await agent('de').request(`${server.oauthUrl}/interaction/abc`, { method: 'DELETE' });
      expect(method.status).toBe(405);
      expect(method.html).toContain('Diese Methode ist nicht erlaubt.');
      const encoding = await fetch(`${server.oauthUrl}/interaction/abc/login`, {
        method: 'POST', headers: { 'content-type': 'text/plain', 'accept-language': 'de' }, body: 'x',
      });
      expect(encoding.status).toBe(415);
      expect(await encoding.text()).toContain('Diese Formularkodierung wird nicht unterstützt.');
    });

    it('an expired form in the sign-in\'s language (its ui_locales)', async () => {
      const ua = agent();
      const login = await authorize(ua, { ui_locales: 'fr' });
      const forged = login.html.replace(/name="csrf" value="[^"]+"/, 'name="csrf" value="forged"');
      const refused = await ua.submit({ ...login, html: forged }, { username: alice.sub, password: alice.password });
      expect(refused.status).toBe(403);
      expect(langOf(refused.html)).toBe('fr');
      expect(refused.html).toContain('Ce formulaire a expiré.');
    });

    it('a too large authorization request (400) and a POST that is not a form, in the browser\'s language', async () => {
      const large = await agent('de').request(`${server.oauthUrl}/authorize?${authorizeQuery(app.clientId, { state: 'x'.repeat(5000) })}`);
      expect(large.status).toBe(400);
      expect(langOf(large.html)).toBe('de');
      expect(large.html).toContain('Die Anmeldeanfrage ist größer als 4096 Bytes.');
      const notForm = await fetch(`${server.oauthUrl}/authorize`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'accept-language': 'fr' }, body: '{}',
      });
      expect(notForm.status).toBe(400);
      expect(await notForm.text()).toContain('La requête doit être un formulaire');
    });
  });

  it('discovery advertises the languages', async () => {
    const metadata = (await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.ui_locales_supported).toEqual(['en', 'de', 'fr']);
  });
});

describe('too many authorization requests: the 429 page in the user\'s language', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]), rateLimits: { authorize: { max: 1, windowSeconds: 60 } } });
  });
  afterAll(() => server.stop());

  it('French by ui_locales', async () => {
    const ua = new UserAgent(server.baseUrl);
    const app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'public' });
    await ua.request(`${server.oauthUrl}/authorize?${authorizeQuery(app.clientId)}`);
    const refused = await ua.request(`${server.oauthUrl}/authorize?${authorizeQuery(app.clientId, { ui_locales: 'fr' })}`);
    expect(refused.status).toBe(429);
    expect(langOf(refused.html)).toBe('fr');
    expect(headingOf(refused.html)).toBe('Veuillez patienter un instant');
    expect(refused.html).toMatch(/Trop de tentatives de connexion depuis votre réseau\. Réessayez dans \d+ secondes\./);
  });
});

describe('the host\'s texts: a language added, texts overridden', () => {
  let server: RunningServer;
  let app: { clientId: string };
  beforeAll(async () => {
    server = await startServer({
      accounts: testAccounts([alice]),
      apis,
      i18n: {
        messages: {
          nl: { signInTitle: 'Inloggen', usernameLabel: 'Gebruikersnaam', signInContinueTo: (name) => `om verder te gaan naar ${name}` },
          de: { signInButton: 'Jetzt anmelden' },
          en: { signInTitle: 'Log in to <Talent>' },
        },
      },
    });
    app = await server.auth.appRegistrations.create({ name: 'Team Web', redirectUris: [WEB], clientType: 'public' });
  });
  afterAll(() => server.stop());

  const authorize = (extra: Record<string, string>, headers: Record<string, string> = {}) =>
    new UserAgent(server.baseUrl, headers).request(`${server.oauthUrl}/authorize?${authorizeQuery(app.clientId, extra)}`);

  it('a new language: its texts, English for the rest', async () => {
    const page = await authorize({}, { 'accept-language': 'nl-BE' });
    expect(langOf(page.html)).toBe('nl');
    expect(titleOf(page.html)).toBe('Inloggen');
    expect(page.html).toContain('<label for="username">Gebruikersnaam</label>');
    expect(page.html).toContain('om verder te gaan naar <strong>Team Web</strong>');
    expect(page.html).toContain('<label for="password">Password</label>');
  });

  it('a language of ours: only the texts given change; a host text is escaped like ours', async () => {
    const de = await authorize({ ui_locales: 'de' });
    expect(de.html).toContain('>Jetzt anmelden</button>');
    expect(de.html).toContain('<label for="password">Passwort</label>');
    const en = await authorize({});
    expect(titleOf(en.html)).toBe('Log in to &lt;Talent&gt;');
  });

  it('discovery advertises the added language', async () => {
    const metadata = (await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.ui_locales_supported).toEqual(['en', 'de', 'fr', 'nl']);
  });

  it('a default locale: served when nothing matches', async () => {
    const other = await startServer({ accounts: testAccounts([alice]), i18n: { defaultLocale: 'de' } });
    try {
      const web = await other.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'public' });
      const page = await new UserAgent(other.baseUrl, { 'accept-language': 'ja' }).request(`${other.oauthUrl}/authorize?${authorizeQuery(web.clientId)}`);
      expect(langOf(page.html)).toBe('de');
    } finally {
      await other.stop();
    }
  });

  it.each<[string, Partial<AuthServerOptions>, string]>([
    ['an unknown text', { i18n: { messages: { de: { signInTitel: 'x' } as never } } }, 'i18n.messages.de.signInTitel: is not a text of the pages'],
    ['a text where a function is due', { i18n: { messages: { de: { consentHeading: 'x' } as never } } }, 'i18n.messages.de.consentHeading: must be a function'],
    ['a function where a text is due', { i18n: { messages: { de: { signInTitle: (() => 'x') as never } } } }, 'i18n.messages.de.signInTitle: must be a string'],
    ['a bad language tag', { i18n: { messages: { 'not a tag': {} } } }, 'i18n.messages'],
    ['a default without texts', { i18n: { defaultLocale: 'nl' } }, 'i18n.defaultLocale: "nl" has no texts'],
    ['per-language scope words without English', { apis: [{ id: 'x', name: 'X', scopes: { 'x.read': { de: 'Lesen' } as never } }] }, 'apis.0.scopes.x.read'],
  ])('refused at start: %s', async (_name, options, message) => {
    await expect(startServer(options)).rejects.toThrow(message);
  });
});
