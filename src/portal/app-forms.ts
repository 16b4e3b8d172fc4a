import { checkRedirectUri } from '../../policies/redirect-uris.js';
import type { Form } from '../http/forms.js';
import { fieldMessage, fieldOf, type ApiAnswer } from './api-client.js';
import { authBody, authValues, authValuesOf, EMPTY_AUTH, tenantProfileOf, type AuthFormValues } from './client-authentication.js';
import type { PortalKit } from './kit.js';
import { done, failed } from './outcomes.js';
import type { PortalCall } from './routes.js';
import { showSecret } from './secret.js';
import type { PortalText } from './text.js';
import { appFieldId, appFormPage, type AppFormValues } from './views/app-form.js';
import { authFields } from './views/client-authentication.js';
import type { FieldErrors } from './views/parts.js';
import type { AppRegistrationWire } from './wire.js';

/*
 * THE APP REGISTRATION FORM: its values from the form and from the API's record, its URI lists
 * ("Add another" without JavaScript; each refused URI at its own input), the API's body, and its
 * saving (a confidential app's secret shown once).
 */

/** URI inputs of one list on the form, at most. */
export const MAX_URIS = 20;

/** The form of a new app registration: one empty input per list. */
const EMPTY: AppFormValues = { name: '', description: '', redirectUris: [''], postLogoutRedirectUris: [''], backchannelLogoutUri: '', clientType: 'confidential', pkceEnabled: true };

/** The URIs of a list as sent: the non-empty ones, and the input each came from (to show an error at it). */
export interface SentUris {
  values: string[];
  inputs: number[];
}

/** The values of a sent form, as typed: every URI input in its place, empty ones too. */
export function appValues(form: Form): AppFormValues {
  const uris = (name: string) => form.getAll(name, { keepEmpty: true }).slice(0, MAX_URIS);
  return {
    name: form.get('name') ?? '',
    description: form.get('description') ?? '',
    redirectUris: uris('redirect_uri'),
    postLogoutRedirectUris: uris('post_logout_redirect_uri'),
    backchannelLogoutUri: form.get('backchannel_logout_uri') ?? '',
    clientType: form.get('client_type') === 'public' ? 'public' : 'confidential',
    pkceEnabled: form.get('pkce_enabled') === 'on',
  };
}

/** The values of the API's record, to edit it (an empty input after each list's URIs). */
export function appValuesOf(record: AppRegistrationWire): AppFormValues {
  return {
    name: record.name,
    description: record.description ?? '',
    redirectUris: [...record.redirect_uris, ''],
    postLogoutRedirectUris: [...record.post_logout_redirect_uris, ''],
    backchannelLogoutUri: record.backchannel_logout_uri ?? '',
    clientType: record.client_type,
    pkceEnabled: record.pkce_enabled,
  };
}

/** The non-empty URIs of a list (trimmed), and the input each came from. */
export function sentUris(uris: string[]): SentUris {
  const inputs = uris.map((uri, index) => (uri.trim() ? index : -1)).filter((index) => index >= 0);
  return { values: inputs.map((index) => uris[index]!.trim()), inputs };
}

/**
 * What is wrong with the form before the API sees it: a name, a redirect URI, and every refused
 * URI at its own input at once (the API, which decides, stops at the first).
 */
export function appFormErrors(values: AppFormValues, redirect: SentUris, logout: SentUris, t: PortalText): FieldErrors {
  const errors: FieldErrors = new Map();
  if (!values.name.trim()) errors.set('app-name', t.required.name);
  if (!redirect.values.length) errors.set('redirect-0', t.required.redirectUri);
  for (const [list, uris] of [['redirect', redirect], ['logout', logout]] as const) {
    uris.values.forEach((uri, index) => {
      const verdict = checkRedirectUri(uri);
      if (!verdict.ok) errors.set(`${list}-${uris.inputs[index]!}`, `"${uri}" ${verdict.rule}`);
    });
  }
  return errors;
}

/**
 * The API's body of the form: PKCE only for a confidential app; the description and back-channel
 * URI when given, or to clear them on an edit.
 */
export function appBody(values: AppFormValues, redirect: SentUris, logout: SentUris, existing?: AppRegistrationWire): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: values.name,
    redirect_uris: redirect.values,
    post_logout_redirect_uris: logout.values,
    client_type: values.clientType,
    ...(values.clientType === 'confidential' ? { pkce_enabled: values.pkceEnabled } : {}),
  };
  if (values.description.trim() || existing) body.description = values.description.trim();
  if (values.backchannelLogoutUri.trim() || existing?.backchannel_logout_uri) body.backchannel_logout_uri = values.backchannelLogoutUri.trim();
  return body;
}

/** The API's refusal (400), at the field it names (a URI at the input it came from). */
function refusedField(answer: ApiAnswer, redirect: SentUris, logout: SentUris): FieldErrors {
  const field = fieldOf(answer);
  const id = appFieldId(field, (list, index) => (list === 'redirect' ? redirect : logout).inputs[index] ?? 0);
  return new Map([[id, fieldMessage(answer, field)]]);
}

/** The form page (400 when it says what is wrong). */
async function sendForm(kit: PortalKit, { ctx, now }: PortalCall, values: AppFormValues, auth: AuthFormValues, errors?: FieldErrors, existing?: AppRegistrationWire): Promise<void> {
  const { t, pages } = kit;
  const named = existing ? { clientId: existing.client_id, name: existing.name } : undefined;
  const title = named ? t.apps.editHeading(named.name) : t.apps.create;
  const view = pages.view(now.session);
  const tenantProfile = await tenantProfileOf(kit, now.session);
  // That call may have refreshed the session's tokens (they rotate): kept before the page is sent.
  await kit.cookies.save(ctx, now);
  const fields = authFields(view, auth, errors, { app: true, tenantProfile, ...(existing ? { existing } : {}) });
  pages.send(ctx, title, appFormPage(view, values, errors, named, fields), errors ? { status: 400 } : {});
}

/** GET /app-registrations/new. */
export async function newAppForm(kit: PortalKit, call: PortalCall): Promise<void> {
  await kit.cookies.save(call.ctx, call.now);
  await sendForm(kit, call, EMPTY, EMPTY_AUTH);
}

/** GET /app-registrations/{id}: the record's form (it was read, src/portal/records.ts). */
export function editAppForm(kit: PortalKit, call: PortalCall, record: AppRegistrationWire): Promise<void> {
  return sendForm(kit, call, appValuesOf(record), authValuesOf(record), undefined, record);
}

/**
 * POST /app-registrations and /app-registrations/{id} (`existing`: the record, read): "Add
 * another URI" (the same form, one more input, nothing sent), or the app saved.
 */
export async function saveApp(kit: PortalKit, call: PortalCall, existing?: AppRegistrationWire): Promise<void> {
  const { ctx, now } = call;
  const values = appValues(call.form);
  const auth = authValues(call.form);
  const more = call.form.get('more');
  if (more === 'redirect' || more === 'logout') {
    const list = more === 'redirect' ? values.redirectUris : values.postLogoutRedirectUris;
    if (list.length < MAX_URIS) list.push('');
    return sendForm(kit, call, values, auth, undefined, existing);
  }
  const redirect = sentUris(values.redirectUris);
  const logout = sentUris(values.postLogoutRedirectUris);
  // A public app does not authenticate: its method and keys are not sent (the API would refuse them).
  const authentication = authBody(auth, kit.t, { authenticates: values.clientType === 'confidential', app: true, ...(existing ? { existing } : {}) });
  const errors = new Map([...appFormErrors(values, redirect, logout, kit.t), ...authentication.errors]);
  if (errors.size) return sendForm(kit, call, values, auth, errors, existing);
  const body = { ...appBody(values, redirect, logout, existing), ...authentication.body };
  const answer = existing
    ? await kit.api.call(now.session, 'PATCH', `app-registrations/${encodeURIComponent(existing.client_id)}`, body)
    : await kit.api.call(now.session, 'POST', 'app-registrations', body);
  if (answer.status === 400) return sendForm(kit, call, values, auth, refusedField(answer, redirect, logout), existing);
  if (answer.status !== 200 && answer.status !== 201) return failed(kit, ctx, now, answer);
  const name = String(answer.body.name);
  if (typeof answer.body.client_secret === 'string') {
    // A confidential app that had keys and stays confidential got its secret by going back to one.
    const fromKeys = existing?.client_type === 'confidential' && existing.token_endpoint_auth_method === 'private_key_jwt';
    return showSecret(kit, ctx, now, { what: 'app_registration', name, clientId: String(answer.body.client_id), clientSecret: answer.body.client_secret, regenerated: fromKeys, ...(fromKeys ? { fromKeys } : {}) });
  }
  return done(kit, ctx, now, existing ? kit.t.apps.saved(name) : values.clientType === 'public' ? kit.t.apps.createdPublic(name) : kit.t.apps.created(name));
}
