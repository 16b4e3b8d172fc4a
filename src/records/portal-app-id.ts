import { createHash } from 'node:crypto';

/*
 * The client ID of the portal's own app (src/portal/own-app.ts), at the records layer: a restore
 * (src/records/backup.ts) must know it without reaching up to the portal.
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

