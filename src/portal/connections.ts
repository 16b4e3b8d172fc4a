import type { Form } from '../http/forms.js';
import { fieldMessage, fieldOf, listOf, reasonOf, type ApiAnswer } from './api-client.js';
import type { ConnectionWire } from './connection-wire.js';
import type { PortalKit } from './kit.js';
import { done, failed, forbidden } from './outcomes.js';
import type { PortalCall } from './routes.js';
import { connectionFieldId, connectionFormPage, connectionsPage, type ConnectionFormValues } from './views/connections.js';
import type { FieldErrors } from './views/parts.js';
import { confirmPage } from './views/simple-pages.js';

/*
 * SIGN-IN PROVIDERS: the organisation's identity providers (enterprise sign-in), for its admins,
 * through the management API as the signed-in user (`{api}/connections`, `{api}/tenant-settings`):
 * what she may not see or change, the API refuses, and the portal shows that refusal.
 *
 * - The list, each provider with its own redirect URI to copy into the provider (known once it is
 *   saved: the new provider's notice names it too), and the tenant's SSO rule (optional or
 *   required), changed only after a recent sign-in (a sign-in rule of every user: src/portal/reauth.ts).
 * - The tenant's security profile of its clients (docs/high-security.md), on the same page because
 *   it is the only one showing the tenant's settings (one API record: a save of either keeps the
 *   other). Changed only after a recent sign-in, both ways: turning it on decides which clients
 *   get tokens at all, turning it off loosens every client. The API refuses the switch while a
 *   client does not conform, naming those clients: the page says so and names them.
 * - Adding or changing a provider also needs a recent sign-in: a provider vouches for who signs in.
 * - A provider's form: the client secret is write-only (a password input never filled in; typed,
 *   it replaces the one kept; left empty, the kept one stays; "remove" removes it).
 * - Deleting one needs a confirmation and a recent sign-in, like every destructive action.
 */

/** What the tenant-settings API answers (the parts the page reads and keeps). */
interface TenantSettingsWire {
  second_factor?: string;
  passkey_only_sign_in?: boolean;
  sso?: 'optional' | 'required';
  profile?: 'standard' | 'high-security';
  effective?: { sso?: 'optional' | 'required'; profile?: 'standard' | 'high-security' };
}

/** The form of a new provider. */
const EMPTY: ConnectionFormValues = { name: '', issuer: '', clientId: '', method: 'client_secret_basic', domains: '', scopes: '', claims: '', signOutUpstream: false, removeSecret: false };

const METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;

/** The values of a sent form, as typed (the secret is read apart: it is never sent back). */
function valuesOf(form: Form): ConnectionFormValues {
  const method = form.get('token_endpoint_auth_method');
  return {
    name: form.get('name') ?? '',
    issuer: form.get('issuer') ?? '',
    clientId: form.get('client_id') ?? '',
    method: (METHODS as readonly string[]).includes(method ?? '') ? method as ConnectionFormValues['method'] : 'client_secret_basic',
    domains: form.get('domains') ?? '',
    scopes: form.get('scopes') ?? '',
    claims: form.get('claims') ?? '',
    signOutUpstream: form.get('sign_out_upstream') === 'on',
    removeSecret: form.get('remove_secret') === 'on',
  };
}

/** The values of the API's record, to edit it. */
function valuesOfRecord(record: ConnectionWire): ConnectionFormValues {
  return {
    name: record.name,
    issuer: record.issuer,
    clientId: record.client_id,
    method: record.token_endpoint_auth_method,
    domains: record.domains.join('\n'),
    scopes: record.scopes.join(' '),
    claims: Object.entries(record.claim_mapping).map(([ours, theirs]) => `${ours}=${theirs}`).join('\n'),
    signOutUpstream: record.sign_out_upstream,
    removeSecret: false,
  };
}

/** `claim=provider claim` per line, or the line that is not one. */
function claimMappingOf(text: string): Record<string, string> | { bad: string } {
  const mapping: Record<string, string> = {};
  for (const line of text.split(/\r?\n/).map((each) => each.trim()).filter(Boolean)) {
    const equals = line.indexOf('=');
    if (equals <= 0 || equals === line.length - 1) return { bad: line };
    mapping[line.slice(0, equals).trim()] = line.slice(equals + 1).trim();
  }
  return mapping;
}

/** The API's body of the form (`existing`: an edit, which sends the lists even when emptied), or the errors the form has before the API sees it. */
function bodyOf(kit: PortalKit, values: ConnectionFormValues, secret: string, existing: ConnectionWire | undefined): { body: Record<string, unknown> } | { errors: FieldErrors } {
  const { t } = kit;
  const errors: FieldErrors = new Map();
  if (!values.name.trim()) errors.set('connection-name', t.connections.required.name);
  if (!values.issuer.trim()) errors.set('connection-issuer', t.connections.required.issuer);
  if (!values.clientId.trim()) errors.set('connection-client-id', t.connections.required.clientId);
  const claims = claimMappingOf(values.claims);
  if ('bad' in claims && typeof claims.bad === 'string') errors.set('connection-claims', t.connections.badClaim(claims.bad));
  if (errors.size) return { errors };
  const scopes = values.scopes.split(/\s+/).filter(Boolean);
  return {
    body: {
      name: values.name,
      issuer: values.issuer.trim(),
      client_id: values.clientId.trim(),
      token_endpoint_auth_method: values.method,
      domains: values.domains.split(/[\s,]+/).filter(Boolean),
      ...(scopes.length || existing ? { scopes } : {}),
      ...(Object.keys(claims).length || existing ? { claim_mapping: claims } : {}),
      sign_out_upstream: values.signOutUpstream,
      // Typed: the new secret; "remove" ticked: none; else the kept one stays (nothing sent).
      ...(secret ? { client_secret: secret } : values.removeSecret && existing ? { client_secret: '' } : {}),
    },
  };
}

/** The form page (400 when it says what is wrong). */
function sendForm(kit: PortalKit, { ctx, now }: PortalCall, values: ConnectionFormValues, errors?: FieldErrors, existing?: ConnectionWire): void {
  const { t, pages } = kit;
  const named = existing ? { id: existing.id, name: existing.name, hasSecret: existing.has_client_secret, redirectUri: existing.redirect_uri } : undefined;
  pages.send(ctx, named ? t.connections.editHeading(named.name) : t.connections.create, connectionFormPage(pages.view(now.session), values, errors, named), errors ? { status: 400 } : {});
}

/** The provider of the call's `{id}`, as the API gives it to the user. */
function read(kit: PortalKit, { now, id }: PortalCall): Promise<ApiAnswer> {
  return kit.api.call(now.session, 'GET', `connections/${encodeURIComponent(id)}`);
}

/** GET /connections: the list (each with its redirect URI), the SSO rule (the notice the last action left, shown once). */
export async function connectionsList(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  const { session } = now;
  const notice = session.notice;
  delete session.notice;
  const [listed, settings] = await Promise.all([kit.api.call(session, 'GET', 'connections'), kit.api.call(session, 'GET', 'tenant-settings')]);
  await kit.cookies.save(ctx, now);
  if (listed.status === 403) return forbidden(kit, ctx, now);
  if (listed.status !== 200) return failed(kit, ctx, now, listed);
  const own = settings.status === 200 ? settings.body as TenantSettingsWire : undefined;
  const sso = own ? { own: own.sso, effective: own.effective?.sso ?? 'optional' } : undefined;
  const profile = own ? { own: own.profile, effective: own.effective?.profile ?? 'standard' } : undefined;
  kit.pages.send(ctx, kit.t.connections.heading, connectionsPage(kit.pages.view(session), session.user!, notice, listOf<ConnectionWire>(listed, 'connections'), sso, profile));
}

/** GET /connections/new. */
export async function newConnection(kit: PortalKit, call: PortalCall): Promise<void> {
  await kit.cookies.save(call.ctx, call.now);
  sendForm(kit, call, EMPTY);
}

/** GET /connections/{id}: its form. */
export async function editConnection(kit: PortalKit, call: PortalCall): Promise<void> {
  const answer = await read(kit, call);
  await kit.cookies.save(call.ctx, call.now);
  if (answer.status !== 200) return failed(kit, call.ctx, call.now, answer);
  const record = answer.body as unknown as ConnectionWire;
  sendForm(kit, call, valuesOfRecord(record), undefined, record);
}

/**
 * POST /connections and /connections/{id} (after a recent sign-in: a provider decides who signs in
 * as the organisation's users): the provider saved, or the form again with what is wrong at its
 * field. A new provider's notice names its redirect URI (known only now that it exists).
 */
export async function saveConnection(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now, id, form } = call;
  let existing: ConnectionWire | undefined;
  if (id) {
    const answer = await read(kit, call);
    if (answer.status !== 200) return failed(kit, ctx, now, answer);
    existing = answer.body as unknown as ConnectionWire;
  }
  const values = valuesOf(form);
  const built = bodyOf(kit, values, form.get('client_secret') ?? '', existing);
  if ('errors' in built) return sendForm(kit, call, values, built.errors, existing);
  const answer = existing
    ? await kit.api.call(now.session, 'PATCH', `connections/${encodeURIComponent(existing.id)}`, built.body)
    : await kit.api.call(now.session, 'POST', 'connections', built.body);
  if (answer.status === 400) {
    await kit.cookies.save(ctx, now);
    const field = fieldOf(answer);
    return sendForm(kit, call, values, new Map([[connectionFieldId(field), fieldMessage(answer, field)]]), existing);
  }
  if (answer.status !== 200 && answer.status !== 201) return failed(kit, ctx, now, answer);
  const saved = answer.body as unknown as ConnectionWire;
  return done(kit, ctx, now, existing ? kit.t.connections.saved(saved.name) : kit.t.connections.created(saved.name, saved.redirect_uri), 'ok', '/connections');
}

/** GET /connections/{id}/delete: what deleting does, and the button. */
export async function confirmDeleteConnection(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now, id } = call;
  const answer = await read(kit, call);
  await kit.cookies.save(ctx, now);
  if (answer.status !== 200) return failed(kit, ctx, now, answer);
  const { t, pages } = kit;
  const name = String(answer.body.name);
  const heading = t.connections.deleteHeading(name);
  pages.send(ctx, heading, confirmPage(pages.view(now.session), heading, t.connections.deleteWarning, `${pages.base}/connections/${encodeURIComponent(id)}/delete`, `${t.delete} ${name}`, true));
}

/** POST /connections/{id}/delete (after a recent sign-in): gone, its domains free again. */
export async function deleteConnection(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now, id } = call;
  const existing = await read(kit, call);
  if (existing.status !== 200) return failed(kit, ctx, now, existing);
  const answer = await kit.api.call(now.session, 'DELETE', `connections/${encodeURIComponent(id)}`);
  if (answer.status !== 204) return failed(kit, ctx, now, answer);
  return done(kit, ctx, now, kit.t.connections.deleted(String(existing.body.name)), 'ok', '/connections');
}

/**
 * The tenant's settings as the settings API takes them back, with `change` applied: the API
 * replaces them whole, so the choices the page does not change are sent back as they are.
 */
function settingsWith(own: TenantSettingsWire, change: Pick<TenantSettingsWire, 'sso'> | Pick<TenantSettingsWire, 'profile'>): Record<string, unknown> {
  return {
    ...(own.second_factor !== undefined ? { second_factor: own.second_factor } : {}),
    ...(own.passkey_only_sign_in !== undefined ? { passkey_only_sign_in: own.passkey_only_sign_in } : {}),
    ...(own.sso !== undefined ? { sso: own.sso } : {}),
    ...(own.profile !== undefined ? { profile: own.profile } : {}),
    ...change,
  };
}

/** POST /connections/sso (after a recent sign-in): the tenant's SSO rule. */
export async function saveSso(kit: PortalKit, { ctx, now, form }: PortalCall): Promise<void> {
  const rule = form.get('sso');
  if (rule !== 'optional' && rule !== 'required') return done(kit, ctx, now, kit.t.connections.ssoPick, 'error', '/connections');
  const current = await kit.api.call(now.session, 'GET', 'tenant-settings');
  if (current.status !== 200) return failed(kit, ctx, now, current);
  const answer = await kit.api.call(now.session, 'PUT', 'tenant-settings', settingsWith(current.body as TenantSettingsWire, { sso: rule }));
  if (answer.status !== 200) return failed(kit, ctx, now, answer);
  return done(kit, ctx, now, kit.t.connections.ssoSaved[rule], 'ok', '/connections');
}

/**
 * POST /connections/profile (after a recent sign-in): the tenant's security profile of its
 * clients. A switch the API refuses because clients do not conform (400 at `profile`) is said on
 * the page with the IDs it names.
 */
export async function saveProfile(kit: PortalKit, { ctx, now, form }: PortalCall): Promise<void> {
  const { t } = kit;
  const profile = form.get('profile');
  if (profile !== 'standard' && profile !== 'high-security') return done(kit, ctx, now, t.clientAuth.tenantProfilePick, 'error', '/connections');
  const current = await kit.api.call(now.session, 'GET', 'tenant-settings');
  if (current.status !== 200) return failed(kit, ctx, now, current);
  const answer = await kit.api.call(now.session, 'PUT', 'tenant-settings', settingsWith(current.body as TenantSettingsWire, { profile }));
  if (answer.status === 400 && fieldOf(answer) === 'profile') {
    // The API's sentence ends with the clients (their IDs, at most 20 and how many more).
    const reason = fieldMessage(answer, 'profile');
    const named = /change them first: (.+)$/.exec(reason)?.[1] ?? reasonOf(answer);
    return done(kit, ctx, now, t.clientAuth.tenantProfileRefused(named), 'error', '/connections');
  }
  if (answer.status !== 200) return failed(kit, ctx, now, answer);
  return done(kit, ctx, now, t.clientAuth.tenantProfileSaved[profile]!, 'ok', '/connections');
}
