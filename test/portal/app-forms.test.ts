import { Form } from '../../src/http/forms.js';
import { appBody, appFormErrors, appValues, appValuesOf, MAX_URIS, sentUris } from '../../src/portal/app-forms.js';
import { PORTAL_TEXT } from '../../src/portal/text.js';

/** The app registration form's values: from the form (URI inputs by position), from the API's record, into the API's body. */

const form = (pairs: Array<[string, string]>) => new Form(pairs, new Set(['redirect_uri', 'post_logout_redirect_uri']));
const record = {
  client_id: 'c', name: 'HR reports', redirect_uris: ['https://a.example/cb'], post_logout_redirect_uris: [],
  client_type: 'confidential' as const, pkce_enabled: false, backchannel_logout_uri: 'https://a.example/bc',
};

describe('app registration form values', () => {
  it('keep every URI input in its place, empty ones too (so that "Add another" and errors find their input)', () => {
    const values = appValues(form([
      ['name', 'HR reports'], ['redirect_uri', ''], ['redirect_uri', 'https://a.example/cb'], ['redirect_uri', ''],
      ['client_type', 'public'], ['pkce_enabled', 'on'],
    ]));
    expect(values).toEqual({
      name: 'HR reports', description: '', redirectUris: ['', 'https://a.example/cb', ''], postLogoutRedirectUris: [],
      backchannelLogoutUri: '', clientType: 'public', pkceEnabled: true,
    });
  });

  it('take at most 20 inputs per list; any client type but public is confidential; PKCE only when checked', () => {
    const values = appValues(form([...Array.from({ length: 25 }, (_, n): [string, string] => ['redirect_uri', `https://a.example/${n}`]), ['client_type', 'spa']]));
    expect(values.redirectUris).toHaveLength(MAX_URIS);
    expect(values.redirectUris.at(-1)).toBe('https://a.example/19');
    expect(values.clientType).toBe('confidential');
    expect(values.pkceEnabled).toBe(false);
  });

  it('of the API\'s record, to edit it: an empty input after each list', () => {
    expect(appValuesOf(record)).toEqual({
      name: 'HR reports', description: '', redirectUris: ['https://a.example/cb', ''], postLogoutRedirectUris: [''],
      backchannelLogoutUri: 'https://a.example/bc', clientType: 'confidential', pkceEnabled: false,
    });
  });

  it('send the non-empty URIs, trimmed, each with the input it came from', () => {
    expect(sentUris(['', ' https://a.example/cb ', '  ', 'myapp://cb'])).toEqual({ values: ['https://a.example/cb', 'myapp://cb'], inputs: [1, 3] });
  });

  it('are refused before the API sees them: a name, a redirect URI, and every refused URI at its own input at once', () => {
    const values = { ...appValuesOf(record), name: '' };
    const redirect = sentUris(['', 'http://a.example/plain', 'https://a.example/ok']);
    const logout = sentUris(['https://a.example/out#top']);
    const errors = appFormErrors(values, redirect, logout, PORTAL_TEXT);
    expect([...errors.keys()]).toEqual(['app-name', 'redirect-1', 'logout-0']);
    expect(errors.get('redirect-1')).toMatch(/^"http:\/\/a\.example\/plain" plain http is allowed only for/);
    expect(errors.get('logout-0')).toMatch(/fragment/);
    expect([...appFormErrors(values, sentUris(['', ' ']), sentUris([]), PORTAL_TEXT)]).toEqual([['app-name', PORTAL_TEXT.required.name], ['redirect-0', PORTAL_TEXT.required.redirectUri]]);
    expect(appFormErrors(appValuesOf(record), sentUris(['https://a.example/cb']), sentUris([]), PORTAL_TEXT).size).toBe(0);
  });

  it('become the API\'s body: PKCE only for a confidential app; description and back-channel URI when given, or cleared on an edit', () => {
    const fresh = { ...appValuesOf(record), backchannelLogoutUri: ' ', description: ' ' };
    const redirect = sentUris(['https://a.example/cb']);
    expect(appBody(fresh, redirect, sentUris([]))).toEqual({
      name: 'HR reports', redirect_uris: ['https://a.example/cb'], post_logout_redirect_uris: [], client_type: 'confidential', pkce_enabled: false,
    });
    expect(appBody({ ...fresh, clientType: 'public' }, redirect, sentUris([]))).not.toHaveProperty('pkce_enabled');
    expect(appBody(fresh, redirect, sentUris([]), record)).toMatchObject({ description: '', backchannel_logout_uri: '' });
    expect(appBody({ ...fresh, description: ' Monthly ', backchannelLogoutUri: ' https://a.example/bc ' }, redirect, sentUris([]))).toMatchObject({ description: 'Monthly', backchannel_logout_uri: 'https://a.example/bc' });
  });
});
