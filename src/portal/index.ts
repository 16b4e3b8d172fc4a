import type { Context, Next } from 'koa';
import { activity } from './activity.js';
import { newAppForm, saveApp } from './app-forms.js';
import { createClient, newClientForm } from './client-forms.js';
import { revokeConsent } from './consents.js';
import { PortalDispatcher } from './dispatch.js';
import { home } from './home.js';
import { portalKit, type PortalKit } from './kit.js';
import { confirmation, editPage, regenerate, remove, update } from './records.js';
import { signInAgain } from './reauth.js';
import { PortalRouter, type PortalHandlers } from './routes.js';
import { secretPage } from './secret.js';
import { addPasskey, confirmApp, newPasskey, newRecoveryCodes, removeFactor, securityPage, startApp } from './security.js';
import type { PortalClient, PortalSetup } from './setup.js';
import { callback, login, logout, type Resume } from './sign-in.js';
import { unlock, unlockForm } from './unlock.js';
import { confirmDeleteConnection, connectionsList, deleteConnection, editConnection, newConnection, saveConnection, saveProfile, saveSso } from './connections.js';

export { portalClientId, portalClientSecret, registerPortalApp } from './own-app.js';
export type { PortalClient, PortalSetup } from './setup.js';

/*
 * THE ADMINISTRATION PORTAL (`portal: { enabled: true }`), at `{pathPrefix}/portal`: a first-party
 * app of the server. It signs users in through our own authorization endpoint (code + PKCE, as its
 * own confidential app, src/portal/sign-in.ts), keeps their tokens in an encrypted server-side
 * session (src/portal/session-cookies.ts, sessions.ts), and calls the management and consent APIs
 * with them (api-client.ts), so a user can do nothing here that the APIs would not let her do.
 * Users holding "Create and update integration setup" manage their organisation's client
 * configurations and app registrations (client-forms.ts, app-forms.ts, records.ts), see its
 * Activity (activity.ts) and the platform's apps that serve it (home.ts), and lift sign-in holds of
 * its users (unlock.ts), and connect its identity providers and set its SSO rule (connections.ts); everyone sees and revokes her consents (consents.ts) and manages her own
 * second factors (security.ts). A destructive action needs a recent sign-in (reauth.ts).
 *
 * What a user may do here is read from the scopes her access token was granted: without the
 * management right the portal calls no management API at all (no refusal to record) and answers
 * its forms and confirmations with a page (403) that names the permission she lacks (the `manage`
 * rows of routes.ts, dispatch.ts).
 *
 * Pages are server-rendered forms that work without JavaScript (views/), under a strict CSP (no
 * script but the copy button of the secret page, by nonce). A secret is shown once (secret.ts).
 */

/** The handler of every row of the portal's table. */
function portalHandlers(kit: PortalKit, resume: Resume): PortalHandlers {
  return {
    login: (ctx) => login(kit, ctx),
    callback: (ctx) => callback(kit, ctx, resume),
    home: (call) => home(kit, call),
    secret: (call) => secretPage(kit, call),
    logout: (call) => logout(kit, call),
    revokeConsent: (call) => revokeConsent(kit, call),
    security: (call) => securityPage(kit, call),
    startApp: (call) => startApp(kit, call),
    confirmApp: (call) => confirmApp(kit, call),
    newRecoveryCodes: (call) => newRecoveryCodes(kit, call),
    newPasskey: (call) => newPasskey(kit, call),
    addPasskey: (call) => addPasskey(kit, call),
    removeFactor: (call) => removeFactor(kit, call),
    signInAgain: (call) => signInAgain(kit, call),
    activity: (call) => activity(kit, call),
    unlockForm: (call) => unlockForm(kit, call),
    unlock: (call) => unlock(kit, call),
    newClient: (call) => newClientForm(kit, call),
    createClient: (call) => createClient(kit, call),
    editClient: (call) => editPage(kit, call, 'client-configurations'),
    updateClient: (call) => update(kit, call, 'client-configurations'),
    confirmDeleteClient: (call) => confirmation(kit, call, 'client-configurations', 'delete'),
    deleteClient: (call) => remove(kit, call, 'client-configurations'),
    confirmRegenerateClient: (call) => confirmation(kit, call, 'client-configurations', 'secret'),
    regenerateClient: (call) => regenerate(kit, call, 'client-configurations'),
    connections: (call) => connectionsList(kit, call),
    newConnection: (call) => newConnection(kit, call),
    createConnection: (call) => saveConnection(kit, call),
    saveSso: (call) => saveSso(kit, call),
    saveProfile: (call) => saveProfile(kit, call),
    editConnection: (call) => editConnection(kit, call),
    updateConnection: (call) => saveConnection(kit, call),
    confirmDeleteConnection: (call) => confirmDeleteConnection(kit, call),
    deleteConnection: (call) => deleteConnection(kit, call),
    newApp: (call) => newAppForm(kit, call),
    createApp: (call) => saveApp(kit, call),
    editApp: (call) => editPage(kit, call, 'app-registrations'),
    updateApp: (call) => update(kit, call, 'app-registrations'),
    confirmDeleteApp: (call) => confirmation(kit, call, 'app-registrations', 'delete'),
    deleteApp: (call) => remove(kit, call, 'app-registrations'),
    confirmRegenerateApp: (call) => confirmation(kit, call, 'app-registrations', 'secret'),
    regenerateApp: (call) => regenerate(kit, call, 'app-registrations'),
  };
}

/** The portal's Koa middleware: answers under its path, passes everything else on. */
export function portalMiddleware(setup: PortalSetup, client: PortalClient) {
  const kit = portalKit(setup, client);
  // A sign-in again ends by doing the action it was for, through the dispatcher (its row's checks).
  const resume: Resume = (name, call) => dispatcher.resume(name, call);
  const dispatcher: PortalDispatcher = new PortalDispatcher(kit, new PortalRouter({ canUnlock: setup.canUnlock }), portalHandlers(kit, resume));
  const base = kit.pages.base;
  return async function portal(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== base && !ctx.path.startsWith(`${base}/`)) return next();
    const { lang, t } = kit.looks.languageOf(ctx);
    // The look of the user's organisation once she is signed in (the platform's before).
    const tenant = (await kit.cookies.current(ctx).catch(() => undefined))?.session.user?.tenant;
    const branding = await setup.brands.of(tenant);
    return kit.looks.run({ lang, t, branding, address: setup.addressOf(ctx) }, () => dispatcher.answer(ctx));
  };
}
