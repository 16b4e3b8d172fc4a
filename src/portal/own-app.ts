import { createHash, createHmac } from 'node:crypto';
import type { AppRegistrations } from '../records/app-registrations.js';
import type { PortalClient } from './setup.js';
import { PORTAL_TEXT } from './text.js';

/*
 * The portal's own app: a first-party confidential app of the server, the same on every instance
 * (its ID from the issuer, its secret from the cookie key), so that nothing about it is stored
 * but its registration.
 */

/** The portal's own client ID: UUID-shaped, derived from the issuer, the same on every instance. */
export function portalClientId(issuer: string): string {
  const hex = createHash('sha256').update(`talent-auth portal ${issuer}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The shape of every portal client ID (whatever the issuer): a UUID of version 5 and variant `a`.
 * No other client ID has it (apps and client configurations get random UUIDs, version 4), so a
 * restore can refuse the portal's app without knowing the issuer.
 */
export const PORTAL_CLIENT_ID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/;

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
