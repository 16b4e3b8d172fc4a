import { createHmac } from 'node:crypto';
import type { AppRegistrations } from '../records/app-registrations.js';
import type { PortalClient } from './setup.js';
import { PORTAL_TEXT } from './text.js';

/*
 * The portal's own app: a first-party confidential app of the server, the same on every instance
 * (its ID from the issuer, its secret from the cookie key), so that nothing about it is stored
 * but its registration.
 */

import { portalClientId } from '../records/portal-app-id.js';

export { portalClientId, PORTAL_CLIENT_ID_SHAPE } from '../records/portal-app-id.js';

/** The portal's client secret: derived from the cookie key, the same on every instance, never stored in clear. */
export function portalClientSecret(cookieKey: string): string {
  return createHmac('sha256', cookieKey).update('talent-auth portal client secret').digest('base64url');
}

/** Registers (or brings up to date) the portal's own first-party confidential app. */
export async function registerPortalApp(apps: AppRegistrations, issuer: string, portalUrl: string, cookieKey: string): Promise<PortalClient> {
  const clientId = portalClientId(issuer);
  const clientSecret = portalClientSecret(cookieKey);
  await apps.ensureBuiltIn(clientId, {
    name: PORTAL_TEXT.product,
    redirectUris: [`${portalUrl}/callback`],
    postLogoutRedirectUris: [portalUrl],
    clientType: 'confidential',
    firstParty: true,
  }, clientSecret);
  return { clientId, clientSecret };
}
