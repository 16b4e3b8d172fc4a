import { PORTAL_ROUTES, PortalRouter, type PortalRoute } from '../../src/portal/routes.js';

/**
 * The portal's table: which row answers which method and path, with which right. (What each row
 * does: test/portal/portal.test.ts over HTTP, test/e2e/portal.test.ts in Chromium.)
 */

const ID = '0f8e7a1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b';

describe('the portal route table', () => {
  const router = new PortalRouter({ canUnlock: true });
  const row = (method: 'GET' | 'POST', path: string) => {
    const found = router.match(method, path);
    return found && { name: found.route.name, right: found.route.right, id: found.id };
  };

  it.each([
    ['GET', '/login', 'login', 'public'],
    ['GET', '/callback', 'callback', 'public'],
    ['GET', '', 'home', 'session'],
    ['GET', '/', 'home', 'session'],
    ['GET', '/secret', 'secret', 'session'],
    ['POST', '/logout', 'logout', 'session'],
    ['GET', '/activity', 'activity', 'manage'],
    ['GET', '/sign-ins/unlock', 'unlockForm', 'manage'],
    ['POST', '/sign-ins/unlock', 'unlock', 'manage'],
    ['GET', '/client-configurations/new', 'newClient', 'manage'],
    ['POST', '/client-configurations', 'createClient', 'manage'],
    ['GET', '/app-registrations/new', 'newApp', 'manage'],
    ['POST', '/app-registrations', 'createApp', 'manage'],
    ['GET', '/security', 'security', 'session'],
    ['POST', '/security/authenticator-app', 'startApp', 'session'],
    ['POST', '/security/authenticator-app/confirm', 'confirmApp', 'session'],
    ['POST', '/security/recovery-codes', 'newRecoveryCodes', 'session'],
    ['GET', '/security/passkeys/new', 'newPasskey', 'session'],
    ['POST', '/security/passkeys', 'addPasskey', 'session'],
    ['POST', '/security/remove', 'removeFactor', 'session'],
    ['POST', '/reauth', 'signInAgain', 'session'],
  ] as const)('%s %s: %s (%s)', (method, path, name, right) => {
    expect(row(method, path)).toEqual({ name, right, id: '' });
  });

  it.each([
    ['POST', `/consents/${ID}/revoke`, 'revokeConsent', 'session'],
    ['GET', `/client-configurations/${ID}`, 'editClient', 'manage'],
    ['POST', `/client-configurations/${ID}`, 'updateClient', 'manage'],
    ['GET', `/client-configurations/${ID}/delete`, 'confirmDeleteClient', 'manage'],
    ['POST', `/client-configurations/${ID}/delete`, 'deleteClient', 'manage'],
    ['GET', `/client-configurations/${ID}/secret`, 'confirmRegenerateClient', 'manage'],
    ['POST', `/client-configurations/${ID}/secret`, 'regenerateClient', 'manage'],
    ['GET', `/app-registrations/${ID}`, 'editApp', 'manage'],
    ['POST', `/app-registrations/${ID}`, 'updateApp', 'manage'],
    ['GET', `/app-registrations/${ID}/delete`, 'confirmDeleteApp', 'manage'],
    ['POST', `/app-registrations/${ID}/delete`, 'deleteApp', 'manage'],
    ['GET', `/app-registrations/${ID}/secret`, 'confirmRegenerateApp', 'manage'],
    ['POST', `/app-registrations/${ID}/secret`, 'regenerateApp', 'manage'],
  ] as const)('%s %s: %s (%s), with its ID', (method, path, name, right) => {
    expect(row(method, path)).toEqual({ name, right, id: ID });
  });

  it('a fixed path wins over an {id} that looks the same (the first row that matches)', () => {
    expect(row('GET', '/client-configurations/new')?.name).toBe('newClient');
    expect(row('GET', '/app-registrations/new')?.name).toBe('newApp');
    // Only the GET has a "new" page: a POST there is the edit of a record with that ID (the API says it is gone).
    expect(row('POST', '/client-configurations/new')).toEqual({ name: 'updateClient', right: 'manage', id: 'new' });
  });

  it.each([
    ['an unknown path', 'GET', '/nothing-here'],
    ['a trailing slash', 'GET', '/activity/'],
    ['an ID that is not one (escaped slashes)', 'GET', '/client-configurations/..%2F..'],
    ['an ID that is not one (a dot)', 'POST', '/consents/a.b/revoke'],
    ['an ID longer than 64 characters', 'GET', `/client-configurations/${'a'.repeat(65)}`],
    ['a path of another method', 'POST', '/login'],
    ['a path of another method', 'GET', '/logout'],
    ['a path of another method', 'GET', '/client-configurations'],
    ['more after a row\'s path', 'GET', `/client-configurations/${ID}/delete/now`],
    ['the path upper-cased', 'GET', '/ACTIVITY'],
  ] as const)('no row: %s (%s %s)', (_why, method, path) => {
    expect(row(method, path)).toBeUndefined();
  });

  it('the unlock rows only where the host can find users by username', () => {
    const without = new PortalRouter({ canUnlock: false });
    expect(without.match('GET', '/sign-ins/unlock')).toBeUndefined();
    expect(without.match('POST', '/sign-ins/unlock')).toBeUndefined();
    expect(without.match('GET', '/activity')?.route.name).toBe('activity');
  });

  it('every name once, and every row that changes the organisation\'s setup needs the management right', () => {
    const names = PORTAL_ROUTES.map((route) => route.name);
    expect(new Set(names).size).toBe(names.length);
    for (const route of PORTAL_ROUTES) {
      if (/^\/(client-configurations|app-registrations|sign-ins|activity)/.test(route.path)) expect([route.path, route.right]).toEqual([route.path, 'manage']);
    }
    expect(PORTAL_ROUTES.filter((route) => route.right === 'public').map((route) => `${route.method} ${route.path}`)).toEqual(['GET /login', 'GET /callback']);
  });

  it('the destructive rows (a delete, a new secret, a factor removed, the SSO rule changed) need a recent sign-in, and they only; all are POSTs', () => {
    const fresh = PORTAL_ROUTES.filter((route: PortalRoute) => route.fresh).map((route) => route.name);
    expect(fresh.sort()).toEqual(['createConnection', 'deleteApp', 'deleteClient', 'deleteConnection', 'regenerateApp', 'regenerateClient', 'removeFactor', 'saveProfile', 'saveSso', 'updateConnection']);
    for (const route of PORTAL_ROUTES as readonly PortalRoute[]) if (route.fresh) expect(route.method).toBe('POST');
  });
});
