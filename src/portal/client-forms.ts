import type { ApiDefinition } from '../../policies/catalog.js';
import type { Form } from '../http/forms.js';
import { fieldMessage, fieldOf, type ApiAnswer } from './api-client.js';
import { authBody, authValues, authValuesOf, EMPTY_AUTH, tenantProfileOf, type AuthFormValues } from './client-authentication.js';
import type { PortalKit } from './kit.js';
import { done, failed } from './outcomes.js';
import type { PortalCall } from './routes.js';
import { showSecret } from './secret.js';
import type { PortalText } from './text.js';
import { clientFieldId, clientFormPage, type ClientFormValues } from './views/client-form.js';
import { authFields } from './views/client-authentication.js';
import type { FieldErrors } from './views/parts.js';
import type { ClientAuthenticationWire, ClientConfigurationWire } from './wire.js';

/*
 * THE CLIENT CONFIGURATION FORM: its values from the form and from the API's record, the API's
 * body from its values, and its saving (a new one's secret shown once; the API's refusal said at
 * its field).
 */

/** A client configuration's resources as the management API takes them: scopes (and constraint values) per API. */
export type Resources = Record<string, { scopes: string[]; constraints?: Record<string, string[]> }>;

/** A client configuration being edited: its ID, its name before the edit, and how it authenticates now. */
export interface ExistingClient {
  clientId: string;
  name: string;
  authentication?: ClientAuthenticationWire;
}

/** The form of a new client configuration. */
const EMPTY: ClientFormValues = { name: '', category: '', description: '', scopes: [], constraints: {} };

/** The API each scope belongs to. */
function scopeOwners(apis: readonly ApiDefinition[]): Map<string, string> {
  return new Map(apis.flatMap((entry) => Object.keys(entry.scopes).map((scope) => [scope, entry.id] as const)));
}

/** The values of a sent form, as typed (scopes no API has are dropped). */
export function clientValues(form: Form, apis: readonly ApiDefinition[]): ClientFormValues {
  const constraints: Record<string, string> = {};
  for (const entry of apis) {
    for (const dimension of entry.constraints ?? []) constraints[`${entry.id}\n${dimension}`] = form.get(`constraint.${entry.id}.${dimension}`) ?? '';
  }
  const owners = scopeOwners(apis);
  return {
    name: form.get('name') ?? '',
    category: form.get('category') ?? '',
    description: form.get('description') ?? '',
    scopes: form.getAll('scope').filter((scope) => owners.has(scope)),
    constraints,
  };
}

/** The values of the API's record, to edit it (constraint values comma-separated). */
export function clientValuesOf(record: ClientConfigurationWire): ClientFormValues {
  const constraints: Record<string, string> = {};
  for (const [apiId, resource] of Object.entries(record.resources)) {
    for (const [dimension, values] of Object.entries(resource.constraints ?? {})) constraints[`${apiId}\n${dimension}`] = values.join(', ');
  }
  return {
    name: record.name,
    category: record.category,
    description: record.description ?? '',
    scopes: Object.values(record.resources).flatMap((resource) => resource.scopes),
    constraints,
  };
}

/** The API's resources of the values: the APIs with a scope chosen, their constraint values split at commas and lines. */
export function resourcesOf(values: ClientFormValues, apis: readonly ApiDefinition[]): Resources {
  const owners = scopeOwners(apis);
  const resources: Resources = {};
  for (const scope of values.scopes) {
    const apiId = owners.get(scope)!;
    (resources[apiId] ??= { scopes: [] }).scopes.push(scope);
  }
  for (const [key, typed] of Object.entries(values.constraints)) {
    const [apiId, dimension] = key.split('\n') as [string, string];
    const list = typed.split(/[,\n]/).map((value) => value.trim()).filter(Boolean);
    if (resources[apiId] && list.length) (resources[apiId].constraints ??= {})[dimension] = list;
  }
  return resources;
}

/** The fields a client configuration must have, each said at its field when it is missing. */
export function missingClientFields(values: ClientFormValues, t: PortalText): FieldErrors {
  const errors: FieldErrors = new Map();
  if (!values.name.trim()) errors.set('client-name', t.required.name);
  if (!values.category.trim()) errors.set('client-category', t.required.category);
  if (!values.scopes.length) errors.set('apis', t.required.scopes);
  return errors;
}

/** The API's refusal (400), at the field it names. */
function refusedField(answer: ApiAnswer, apis: readonly ApiDefinition[]): FieldErrors {
  const field = fieldOf(answer);
  return new Map([[clientFieldId(apis, field), fieldMessage(answer, field)]]);
}

/** The form page (400 when it says what is wrong), with what the tenant's profile puts the client under. */
async function sendForm(kit: PortalKit, { ctx, now }: PortalCall, values: ClientFormValues, auth: AuthFormValues, errors?: FieldErrors, existing?: ExistingClient): Promise<void> {
  const { t, pages } = kit;
  const title = existing ? t.clients.editHeading(existing.name) : t.clients.create;
  const view = pages.view(now.session);
  const tenantProfile = await tenantProfileOf(kit, now.session);
  // That call may have refreshed the session's tokens (they rotate): kept before the page is sent.
  await kit.cookies.save(ctx, now);
  const fields = authFields(view, auth, errors, { app: false, tenantProfile, ...(existing?.authentication ? { existing: existing.authentication } : {}) });
  pages.send(ctx, title, clientFormPage(view, values, errors, existing, fields), errors ? { status: 400 } : {});
}

/** GET /client-configurations/new. */
export async function newClientForm(kit: PortalKit, call: PortalCall): Promise<void> {
  await kit.cookies.save(call.ctx, call.now);
  await sendForm(kit, call, EMPTY, EMPTY_AUTH);
}

/** GET /client-configurations/{id}: the record's form (it was read, src/portal/records.ts). */
export function editClientForm(kit: PortalKit, call: PortalCall, record: ClientConfigurationWire): Promise<void> {
  return sendForm(kit, call, clientValuesOf(record), authValuesOf(record), undefined, { clientId: record.client_id, name: record.name, authentication: record });
}

/** POST /client-configurations: a new client configuration, its secret shown once (a private_key_jwt client has none). */
export async function createClient(kit: PortalKit, call: PortalCall): Promise<void> {
  const { ctx, now } = call;
  const values = clientValues(call.form, kit.setup.apis);
  const auth = authValues(call.form);
  const authentication = authBody(auth, kit.t, { authenticates: true, app: false });
  const missing = new Map([...missingClientFields(values, kit.t), ...authentication.errors]);
  if (missing.size) return sendForm(kit, call, values, auth, missing);
  const body = { name: values.name, category: values.category, description: values.description, resources: resourcesOf(values, kit.setup.apis), ...authentication.body };
  const { description, ...rest } = body;
  const answer = await kit.api.call(now.session, 'POST', 'client-configurations', description ? body : rest);
  if (answer.status === 201 && typeof answer.body.client_secret === 'string') {
    return showSecret(kit, ctx, now, { what: 'client_configuration', name: String(answer.body.name), clientId: String(answer.body.client_id), clientSecret: answer.body.client_secret, regenerated: false });
  }
  if (answer.status === 201) return done(kit, ctx, now, kit.t.clients.created(String(answer.body.name)));
  if (answer.status === 400) return sendForm(kit, call, values, auth, refusedField(answer, kit.setup.apis));
  return failed(kit, ctx, now, answer);
}

/**
 * POST /client-configurations/{id}: the edit saved (the record was read, src/portal/records.ts); a
 * change back to a shared secret shows the new secret once.
 */
export async function updateClient(kit: PortalKit, call: PortalCall, existing: ExistingClient): Promise<void> {
  const { ctx, now } = call;
  const values = clientValues(call.form, kit.setup.apis);
  const auth = authValues(call.form);
  const authentication = authBody(auth, kit.t, { authenticates: true, app: false, ...(existing.authentication ? { existing: existing.authentication } : {}) });
  const missing = new Map([...missingClientFields(values, kit.t), ...authentication.errors]);
  if (missing.size) return sendForm(kit, call, values, auth, missing, existing);
  const body = { name: values.name, category: values.category, description: values.description, resources: resourcesOf(values, kit.setup.apis), ...authentication.body };
  const answer = await kit.api.call(now.session, 'PATCH', `client-configurations/${encodeURIComponent(existing.clientId)}`, body);
  if (answer.status === 200 && typeof answer.body.client_secret === 'string') {
    return showSecret(kit, ctx, now, { what: 'client_configuration', name: String(answer.body.name), clientId: existing.clientId, clientSecret: answer.body.client_secret, regenerated: true, fromKeys: true });
  }
  if (answer.status === 200) return done(kit, ctx, now, kit.t.clients.saved(String(answer.body.name)));
  if (answer.status === 400) return sendForm(kit, call, values, auth, refusedField(answer, kit.setup.apis), existing);
  return failed(kit, ctx, now, answer);
}
