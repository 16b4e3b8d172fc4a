import { ValidationError } from '../../policies/errors.js';
import type { AuditContext } from '../audit/trail.js';
import type { FactorOwner } from '../factors/index.js';
import type { PortalKit } from './kit.js';
import { done } from './outcomes.js';
import { freshOrSignInAgain } from './reauth.js';
import type { PortalCall } from './routes.js';
import type { Current } from './session-cookies.js';
import { appSetupPage, newPasskeyPage, recoveryCodesPage, securityPage as securityView } from './views/security.js';

/*
 * THE SECURITY PAGE: every signed-in user manages her own second factors here, with or without
 * the management right: the authenticator app (set up, set up anew, remove), passkeys (add,
 * remove), recovery codes (new ones shown once, remove). The portal works on the server's factors
 * directly (src/factors/), for the user of the session and no one else (her `sub` and tenant, as
 * the tokens of her sign-in named them); every change is audited with her as the actor and the
 * browser's address.
 *
 * Every change of a factor, adding one too, needs a recent sign-in (src/portal/reauth.ts): a
 * session left open must not be enough to take a factor away, nor to add one of someone else's
 * (a passkey added by whoever sits at the screen would sign in as her, alone where the tenant
 * allows passkeys alone). Right after signing in there is no detour.
 */

/** What the portal's enrolments of an authenticator app belong to (never a sign-in's). */
const PORTAL_ENROLMENT = 'portal';

/** The session's user as the factors' owner, or undefined when her tokens named no tenant. */
function ownerOf(now: Current): FactorOwner | undefined {
  const user = now.session.user;
  return user?.tenant ? { tenant: user.tenant, sub: user.sub } : undefined;
}

/** Who did it, for the audit trail: the user, from the browser's address. */
function byUser(kit: PortalKit, owner: FactorOwner): AuditContext {
  const { address } = kit.looks.current();
  return { actor: { type: 'user', id: owner.sub }, ...(address ? { address } : {}) };
}

/** The page of a user whose sign-in named no tenant: she has no factors of ours to manage. */
function noOwner(kit: PortalKit, { ctx }: Pick<PortalCall, 'ctx'>): void {
  kit.pages.simple(ctx, 404, kit.t.errors.notFound);
}

/** GET /security: what she holds, and the forms to change it (the notice the last change left, once). */
export async function securityPage(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, { ctx });
  const notice = now.session.notice;
  delete now.session.notice;
  const [summary, list] = await Promise.all([kit.setup.factors.summary(owner), kit.setup.factors.list(owner)]);
  await kit.cookies.save(ctx, now);
  kit.pages.send(ctx, kit.t.security.title, securityView(kit.pages.view(now.session), now.session.user!, { summary, list, notice }));
}

/** POST /security/authenticator-app: a new app's setup (after a recent sign-in). */
export async function startApp(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now } = call;
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, call);
  if (!(await freshOrSignInAgain(kit, call))) return;
  const replaces = (await kit.setup.factors.summary(owner)).authenticatorApp !== undefined;
  const enrolment = await kit.setup.factors.startAuthenticatorApp(owner, owner.sub, PORTAL_ENROLMENT);
  await kit.cookies.save(ctx, now);
  // The key is on this page only (no-store): it is kept nowhere in clear.
  kit.pages.send(ctx, kit.t.securityApp.setupTitle, appSetupPage(kit.pages.view(now.session), { qrSvg: enrolment.qrSvg, secret: enrolment.secret, expiresAt: enrolment.expiresAt, replaces }));
}

/** POST /security/authenticator-app/confirm: the first code makes the app hers. */
export async function confirmApp(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now, form } = call;
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, call);
  const words = kit.t.securityApp;
  const check = await kit.setup.factors.confirmAuthenticatorApp(owner, form.get('code') ?? '', byUser(kit, owner), { boundTo: PORTAL_ENROLMENT });
  if (check.accepted) return done(kit, ctx, now, words.added, 'ok', '/security');
  if (check.reason === 'not_enrolled' || check.reason === 'expired') return done(kit, ctx, now, words.expired, 'error', '/security');
  // A wrong code: the same setup goes on (the key is not shown again: the app has it already).
  const summary = await kit.setup.factors.summary(owner);
  await kit.cookies.save(ctx, now);
  kit.pages.send(ctx, words.setupTitle, appSetupPage(kit.pages.view(now.session), {
    replaces: summary.authenticatorApp !== undefined, error: check.reason === 'malformed' ? words.malformed : words.wrong,
  }), { status: 400 });
}

/** POST /security/recovery-codes: ten new codes, shown this once (after a recent sign-in). */
export async function newRecoveryCodes(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now } = call;
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, call);
  if (!(await freshOrSignInAgain(kit, call))) return;
  const codes = await kit.setup.factors.newRecoveryCodes(owner, byUser(kit, owner));
  await kit.cookies.save(ctx, now);
  // Shown in the answer to the POST (no-store), never kept: only their hashes are.
  kit.pages.send(ctx, kit.t.securityRecovery.title, recoveryCodesPage(kit.pages.view(now.session), codes));
}

/** GET /security/passkeys/new: a passkey's creation (the ceremony's challenge kept on the server). */
export async function newPasskey(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now } = call;
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, call);
  const name = now.session.user!.name?.trim();
  // Her name as her tokens gave it, where it can be one (1 to 255 characters), else her sub.
  const displayName = name && name.length <= 255 ? name : owner.sub;
  const { ceremony, options } = await kit.setup.passkeys.registrationOptions(owner, owner.sub, displayName);
  await kit.cookies.save(ctx, now);
  kit.pages.send(ctx, kit.t.securityPasskeys.addTitle, newPasskeyPage(kit.pages.view(now.session), ceremony, options), { passkeyScript: true });
}

/** The credential field as JSON (what the passkey script put there), or undefined. */
function credentialOf(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * POST /security/passkeys: the browser's new credential, checked against its ceremony, stored
 * (after a recent sign-in: kept meanwhile, done when she is back within the ceremony's time).
 */
export async function addPasskey(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now, form } = call;
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, call);
  if (!(await freshOrSignInAgain(kit, call))) return;
  const words = kit.t.securityPasskeys;
  let outcome;
  try {
    outcome = await kit.setup.passkeys.register(owner, form.get('ceremony'), credentialOf(form.get('credential')), form.get('name') ?? '', byUser(kit, owner));
  } catch (error) {
    if (error instanceof ValidationError) return done(kit, ctx, now, words.nameRequired, 'error', '/security');
    throw error;
  }
  if (outcome.accepted) return done(kit, ctx, now, words.added(outcome.passkey.name), 'ok', '/security');
  return done(kit, ctx, now, outcome.reason === 'not_allowed' ? words.duplicate : words.refused, 'error', '/security');
}

/** POST /security/remove (after a recent sign-in, the table's rule): one of her factors, by its id. */
export async function removeFactor(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now, form } = call;
  const owner = ownerOf(now);
  if (!owner) return noOwner(kit, call);
  const words = kit.t.security;
  const id = form.get('factor');
  const factor = id === undefined ? undefined : (await kit.setup.factors.list(owner)).find((entry) => entry.id === id);
  if (!factor || !(await kit.setup.factors.remove(owner, factor.id, byUser(kit, owner)))) return done(kit, ctx, now, words.gone, 'error', '/security');
  const text = factor.type === 'passkey' ? kit.t.securityPasskeys.removed : factor.type === 'totp' ? kit.t.securityApp.removed : kit.t.securityRecovery.removed;
  return done(kit, ctx, now, text, 'ok', '/security');
}
