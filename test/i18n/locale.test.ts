import { negotiateLocale, parseAcceptLanguage } from '../../src/i18n/locale.js';
import { Localizer } from '../../src/i18n/localizer.js';

const available = ['en', 'de', 'fr'];

describe('negotiateLocale: ui_locales, then Accept-Language, then the default', () => {
  it.each<[string, { uiLocales?: unknown; acceptLanguage?: string; defaultLocale?: string }, string]>([
    ['nothing given: the default (first available)', {}, 'en'],
    ['nothing given: the default given', { defaultLocale: 'fr' }, 'fr'],
    ['ui_locales alone', { uiLocales: 'de' }, 'de'],
    ['ui_locales: the first supported wins', { uiLocales: 'nl fr de' }, 'fr'],
    ['ui_locales: region falls back to the language', { uiLocales: 'fr-CA' }, 'fr'],
    ['ui_locales: case does not matter', { uiLocales: 'DE-at' }, 'de'],
    ['ui_locales before Accept-Language', { uiLocales: 'fr', acceptLanguage: 'de' }, 'fr'],
    ['ui_locales none supported: Accept-Language', { uiLocales: 'nl ja', acceptLanguage: 'de' }, 'de'],
    ['ui_locales extra spaces', { uiLocales: '  nl   de ' }, 'de'],
    ['ui_locales not a string (duplicated parameter): ignored', { uiLocales: ['fr'], acceptLanguage: 'de' }, 'de'],
    ['ui_locales empty', { uiLocales: '', acceptLanguage: 'fr' }, 'fr'],
    ['Accept-Language alone', { acceptLanguage: 'fr' }, 'fr'],
    ['Accept-Language de-CH matches de', { acceptLanguage: 'de-CH' }, 'de'],
    ['Accept-Language q-values: highest first', { acceptLanguage: 'fr;q=0.5, de;q=0.9, en;q=0.1' }, 'de'],
    ['Accept-Language ties: header order', { acceptLanguage: 'fr, de' }, 'fr'],
    ['Accept-Language q=0 means not this one', { acceptLanguage: 'de;q=0, fr;q=0.2' }, 'fr'],
    ['Accept-Language unsupported first, supported later', { acceptLanguage: 'nl-BE, nl;q=0.9, de;q=0.8' }, 'de'],
    ['Accept-Language wildcard alone: the default', { acceptLanguage: '*' }, 'en'],
    ['Accept-Language only unknown: the default', { acceptLanguage: 'ja, zh;q=0.5' }, 'en'],
    ['Accept-Language only unknown: the default given', { acceptLanguage: 'ja', defaultLocale: 'de' }, 'de'],
    ['Accept-Language browser style', { acceptLanguage: 'de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7' }, 'de'],
    ['Accept-Language with spaces and params', { acceptLanguage: ' fr-FR ; q=0.8 , en ; q = 0.5' }, 'fr'],
    // Malformed input is skipped entry by entry, never thrown.
    ['malformed: q not a number', { acceptLanguage: 'de;q=abc, fr;q=0.1' }, 'fr'],
    ['malformed: q above 1', { acceptLanguage: 'de;q=2, fr;q=0.1' }, 'fr'],
    ['malformed: negative q', { acceptLanguage: 'de;q=-1' }, 'en'],
    ['malformed: garbage', { acceptLanguage: ';;;,,,==' }, 'en'],
    ['malformed: a tag with spaces inside', { acceptLanguage: 'd e, fr' }, 'fr'],
    ['malformed: a tag with markup', { acceptLanguage: '<script>, de' }, 'de'],
    ['malformed: an empty header', { acceptLanguage: '' }, 'en'],
    ['malformed: a tag too long', { acceptLanguage: 'deutschland-xx, fr' }, 'fr'],
    ['malformed: ui_locales with markup', { uiLocales: '"><b> de' }, 'de'],
    ['huge header: read only so far', { acceptLanguage: `${'xx,'.repeat(10_000)}de` }, 'en'],
  ])('%s', (_name, request, expected) => {
    expect(negotiateLocale({ available, ...request })).toBe(expected);
  });

  it('prefers the most specific language available', () => {
    expect(negotiateLocale({ available: ['en', 'pt', 'pt-BR'], acceptLanguage: 'pt-BR' })).toBe('pt-BR');
    expect(negotiateLocale({ available: ['en', 'pt', 'pt-BR'], acceptLanguage: 'pt-PT' })).toBe('pt');
    // A language we have only as a region is not served for the bare language.
    expect(negotiateLocale({ available: ['en', 'pt-BR'], acceptLanguage: 'pt' })).toBe('en');
  });

  it('never throws, whatever the header', () => {
    for (const header of ['\u0000', 'q=1', ';q=1', 'de;q', 'de;q=', 'de;;q=0.5', ',', 'de-', '-de', '1de', 'de;x=1;q=0.3']) {
      expect(() => negotiateLocale({ available, acceptLanguage: header })).not.toThrow();
    }
    expect(parseAcceptLanguage('de;x=1;q=0.3, fr')).toEqual(['fr', 'de']);
  });
});

describe('Localizer', () => {
  it('serves en, de and fr, and a host-added language after them', () => {
    const localizer = new Localizer({ messages: { nl: { signInTitle: 'Inloggen' } } });
    expect(localizer.available).toEqual(['en', 'de', 'fr', 'nl']);
    const nl = localizer.choose({ acceptLanguage: 'nl-BE' });
    expect(nl.lang).toBe('nl');
    expect(nl.t.signInTitle).toBe('Inloggen');
    // Missing texts: English.
    expect(nl.t.passwordLabel).toBe('Password');
  });

  it('a known language: only the texts given are replaced', () => {
    const localizer = new Localizer({ messages: { DE: { signInButton: 'Los geht’s' } } });
    const de = localizer.choose({ uiLocales: 'de' });
    expect(de.t.signInButton).toBe('Los geht’s');
    expect(de.t.passwordLabel).toBe('Passwort');
    expect(localizer.available).toEqual(['en', 'de', 'fr']);
  });

  it('the default locale serves what matches nothing', () => {
    const localizer = new Localizer({ defaultLocale: 'fr' });
    expect(localizer.choose({ acceptLanguage: 'ja' }).lang).toBe('fr');
    expect(localizer.choose({}).t.signInTitle).toBe('Se connecter');
  });
});
