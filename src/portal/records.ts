import type { ApiAnswer } from './api-client.js';
import { editAppForm, saveApp } from './app-forms.js';
import { authValues, weakens } from './client-authentication.js';
import { editClientForm, updateClient } from './client-forms.js';
import type { PortalKit } from './kit.js';
import { done, failed } from './outcomes.js';
import { freshOrSignInAgain } from './reauth.js';
import type { PortalCall } from './routes.js';
import { showSecret } from './secret.js';
import type { PortalText } from './text.js';
import { confirmPage } from './views/simple-pages.js';
import type { AppRegistrationWire, ClientConfigurationWire } from './wire.js';

/*
 * A CLIENT CONFIGURATION OR APP REGISTRATION of the organisation: its pages and forms all start by
 * reading it from the API as the user (so what she may not see is "gone", and the API decides),
 * then show its form or a confirmation, or save, delete or regenerate its secret.
 */

/** The management API's collections the portal edits. */
export type Collection = 'client-configurations' | 'app-registrations';

/** The record of the call's `{id}` as the API gives it to the user. */
function read(kit: PortalKit, { now, id }: PortalCall, collection: Collection): Promise<ApiAnswer> {
  return kit.api.call(now.session, 'GET', `${collection}/${encodeURIComponent(id)}`);
}

/** The texts of a collection (its notices and confirmations). */
function textsOf(kit: PortalKit, collection: Collection): PortalText['clients'] | PortalText['apps'] {
  return collection === 'client-configurations' ? kit.t.clients : kit.t.apps;
}

/** GET …/{id}: the record's form. */
export async function editPage(kit: PortalKit, call: PortalCall, collection: Collection): Promise<void> {
  const answer = await read(kit, call, collection);
  await kit.cookies.save(call.ctx, call.now);
  if (answer.status !== 200) return failed(kit, call.ctx, call.now, answer);
  if (collection === 'client-configurations') return editClientForm(kit, call, answer.body as unknown as ClientConfigurationWire);
  return editAppForm(kit, call, answer.body as unknown as AppRegistrationWire);
}

/** GET …/{id}/delete and …/{id}/secret: what will happen, and the button that does it. */
export async function confirmation(kit: PortalKit, call: PortalCall, collection: Collection, action: 'delete' | 'secret'): Promise<void> {
  const { ctx, now } = call;
  const answer = await read(kit, call, collection);
  await kit.cookies.save(ctx, now);
  if (answer.status !== 200) return failed(kit, ctx, now, answer);
  const { t, pages } = kit;
  const name = String(answer.body.name);
  // A private_key_jwt client has no secret: no button that could only fail.
  if (action === 'secret' && authenticatesWithKeys(answer.body)) return done(kit, ctx, now, t.clientAuth.noSecretToRotate(name), 'error');
  const to = `${pages.base}/${collection}/${encodeURIComponent(call.id)}/${action}`;
  const [heading, warning, button] = action === 'delete'
    ? [textsOf(kit, collection).deleteHeading(name), textsOf(kit, collection).deleteWarning, `${t.delete} ${name}`]
    : [t.secret.regenerateHeading(name), t.secret.regenerateWarning, t.regenerate];
  pages.send(ctx, heading, confirmPage(pages.view(now.session), heading, warning, to, button, true));
}

/** Whether the API's record is of a private_key_jwt client or app (it has no secret: it has keys). */
function authenticatesWithKeys(record: Record<string, unknown>): boolean {
  return record.token_endpoint_auth_method === 'private_key_jwt';
}

/** POST …/{id}: the edit saved. */
export async function update(kit: PortalKit, call: PortalCall, collection: Collection): Promise<void> {
  const answer = await read(kit, call, collection);
  if (answer.status !== 200) return failed(kit, call.ctx, call.now, answer);
  const auth = authValues(call.form);
  if (collection === 'client-configurations') {
    const client = answer.body as unknown as ClientConfigurationWire;
    // Lowering a client's protection (DPoP no longer required, keys back to a secret) is done only
    // after a recent sign-in, like the other changes that decide who gets tokens (src/portal/reauth.ts).
    if (weakens(auth, client, true) && !(await freshOrSignInAgain(kit, call))) return;
    return updateClient(kit, call, { clientId: call.id, name: client.name, authentication: client });
  }
  const app = answer.body as unknown as AppRegistrationWire;
  // A client type changed signs every user of the app out (and deletes or makes a secret): only
  // after a recent sign-in (src/portal/reauth.ts), as is lowering its protection. The form's type
  // is read as saveApp reads it.
  const type = call.form.get('client_type') === 'public' ? 'public' : 'confidential';
  if ((type !== app.client_type || weakens(auth, app, type === 'confidential')) && !(await freshOrSignInAgain(kit, call))) return;
  return saveApp(kit, call, app);
}

/** POST …/{id}/delete: gone (its secret stops at once). */
export async function remove(kit: PortalKit, call: PortalCall, collection: Collection): Promise<void> {
  const { ctx, now, id } = call;
  const existing = await read(kit, call, collection);
  if (existing.status !== 200) return failed(kit, ctx, now, existing);
  const answer = await kit.api.call(now.session, 'DELETE', `${collection}/${encodeURIComponent(id)}`);
  if (answer.status !== 204) return failed(kit, ctx, now, answer);
  return done(kit, ctx, now, textsOf(kit, collection).deleted(String(existing.body.name)));
}

/** POST …/{id}/secret: a new secret, shown once (the old one stops at once). */
export async function regenerate(kit: PortalKit, call: PortalCall, collection: Collection): Promise<void> {
  const { ctx, now, id } = call;
  const existing = await read(kit, call, collection);
  if (existing.status !== 200) return failed(kit, ctx, now, existing);
  if (authenticatesWithKeys(existing.body)) return done(kit, ctx, now, kit.t.clientAuth.noSecretToRotate(String(existing.body.name)), 'error');
  const answer = await kit.api.call(now.session, 'POST', `${collection}/${encodeURIComponent(id)}/secret`);
  if (answer.status !== 200 || typeof answer.body.client_secret !== 'string') return failed(kit, ctx, now, answer);
  const what = collection === 'client-configurations' ? 'client_configuration' : 'app_registration';
  return showSecret(kit, ctx, now, { what, name: String(existing.body.name), clientId: id, clientSecret: answer.body.client_secret, regenerated: true });
}
