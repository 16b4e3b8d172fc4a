import type { PortalKit } from './kit.js';
import { done, failed } from './outcomes.js';
import type { PortalCall } from './routes.js';
import type { ConsentWire } from './wire.js';

/** POST /consents/{id}/revoke: the user revokes her consent to an app (the portal's own too: then she is signed out). */
export async function revokeConsent(kit: PortalKit, { ctx, now, id: clientId }: PortalCall): Promise<void> {
  const { api, t } = kit;
  const listed = await api.call(now.session, 'GET', 'consents');
  const consent = ((listed.body.consents ?? []) as ConsentWire[]).find((entry) => entry.client_id === clientId);
  const answer = await api.call(now.session, 'DELETE', `consents/${encodeURIComponent(clientId)}`);
  if (answer.status !== 204) return failed(kit, ctx, now, answer);
  const name = consent?.app_name ?? t.consents.deletedApp;
  if (clientId === kit.client.clientId) {
    // The portal's own grant (and refresh token) is gone: so is this sign-in.
    await kit.cookies.end(ctx, now.id);
    return kit.pages.landing(ctx, t.consents.revokedPortal(name));
  }
  return done(kit, ctx, now, t.consents.revoked(name));
}
