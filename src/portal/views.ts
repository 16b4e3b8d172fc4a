import type { ApiDefinition } from '../../policies/catalog.js';
import { escapeHtml as e } from '../pages/html.js';
import type { PortalText } from './text.js';

/*
 * The portal's pages as HTML strings: server-rendered forms that work without JavaScript (the
 * secret page's copy button is the only script), every control labelled, every error tied to its
 * field (aria-invalid, aria-describedby) and listed in a summary at the top of its form.
 */

/** A client configuration as the management API gives it. */
export interface ClientConfigurationWire {
  client_id: string;
  name: string;
  category: string;
  description?: string;
  resources: Record<string, { scopes: string[]; constraints?: Record<string, string[]> }>;
}

/** An app registration as the management API gives it. */
export interface AppRegistrationWire {
  client_id: string;
  name: string;
  description?: string;
  redirect_uris: string[];
  client_type: 'public' | 'confidential';
  pkce_enabled: boolean;
  post_logout_redirect_uris: string[];
  backchannel_logout_uri?: string;
}

/** A consent as the consent API gives it. */
export interface ConsentWire {
  client_id: string;
  app_name: string | null;
  scopes: Array<{ scope: string; description: string; api?: string }>;
  updated_at: string;
}

/** An audit event as the management API gives it. */
export interface AuditEventWire {
  time: string;
  type: string;
  actor: { type: string; id?: string };
  target?: { type: string; id: string };
  address?: string;
  details?: Record<string, unknown>;
}

/** An app that serves the organisation besides its own, as the management API gives it. */
export interface PlatformAppWire {
  client_id: string;
  name: string;
  description?: string;
  client_type: 'public' | 'confidential';
  first_party: boolean;
  registered_by: 'platform' | 'another_tenant';
  redirect_uris: string[];
}

/** What the Activity knows of the IDs in its events: names, looked up when the page is made. */
export interface ActivityNames {
  /** Users of the organisation, by `sub`: their names (users the account store does not know are absent). */
  users: ReadonlyMap<string, string>;
  /** Client configurations and apps the organisation can see, by client ID: their names now. */
  records: ReadonlyMap<string, string>;
}

/** The Activity page's filter as typed (dates `YYYY-MM-DD`, UTC). */
export interface ActivityFilter {
  type: string;
  since: string;
  until: string;
}

/** What went wrong with a form: a message per field ID (`''`: the whole form). */
export type FieldErrors = Map<string, string>;

/** A form's values as typed, to render it again. */
export interface ClientFormValues {
  name: string;
  category: string;
  description: string;
  scopes: string[];
  /** `<api>\n<dimension>` → the values as typed. */
  constraints: Record<string, string>;
}

/** An app form's values as typed. */
export interface AppFormValues {
  name: string;
  description: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string;
  clientType: 'public' | 'confidential';
  pkceEnabled: boolean;
}

/** Where the page's forms post to and links go: `{pathPrefix}{path}` of the portal. */
export interface ViewContext {
  t: PortalText;
  base: string;
  csrf: string;
  apis: readonly ApiDefinition[];
  /** What a scope allows, in the page's language. */
  scopeWords: (scope: string) => string;
  /** What a consented scope allows and its API's name, in the page's language (OIDC scopes too). */
  consentScopeWords: (scope: string) => { description: string; api?: string };
  /** The organisation's product name (branding), shown above the heading. */
  productName?: string | undefined;
}

export function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

function csrfField(view: ViewContext): string {
  return `<input type="hidden" name="csrf" value="${e(view.csrf)}">`;
}

/** The form's error summary: a link to each field in error (first thing read, focused by nothing). */
function errorSummary(view: ViewContext, errors: FieldErrors | undefined): string {
  if (!errors?.size) return '';
  const items = [...errors].map(([id, message]) => (id ? `<li><a href="#${e(id)}">${e(message)}</a></li>` : `<li>${e(message)}</li>`)).join('');
  return `<div class="error" role="alert"><p>${e(view.t.fixErrors(errors.size))}</p><ul>${items}</ul></div>`;
}

/** The attributes and message of a field in error, tied together. */
function fieldError(id: string, errors: FieldErrors | undefined, hintId?: string): { attributes: string; message: string } {
  const message = errors?.get(id);
  const described = [hintId, message ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return {
    attributes: `${message ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}`,
    message: message ? `<p class="field-error" id="${id}-error">${e(message)}</p>` : '',
  };
}

function textField(id: string, label: string, name: string, value: string, errors: FieldErrors | undefined, options: { required?: boolean; hint?: string; max?: number; placeholder?: string } = {}): string {
  const hintId = options.hint ? `${id}-hint` : undefined;
  const { attributes, message } = fieldError(id, errors, hintId);
  return `<label for="${id}">${e(label)}</label>
${options.hint ? `<p class="hint" id="${hintId}">${e(options.hint)}</p>` : ''}${message}
<input id="${id}" name="${name}" value="${e(value)}"${options.required ? ' required' : ''} maxlength="${options.max ?? 200}"${options.placeholder ? ` placeholder="${e(options.placeholder)}"` : ''}${attributes}>`;
}

function textArea(id: string, label: string, name: string, value: string, errors: FieldErrors | undefined): string {
  const { attributes, message } = fieldError(id, errors);
  return `<label for="${id}">${e(label)}</label>${message}
<textarea id="${id}" name="${name}" rows="3" maxlength="1000"${attributes}>${e(value)}</textarea>`;
}

/** The IDs of the client form's fields, by the API's field names. */
export function clientFieldId(apis: readonly ApiDefinition[], field: string): string {
  const [head, apiId, part, dimension] = field.split('.');
  if (head === 'name' || head === 'category' || head === 'description') return `client-${head}`;
  const index = apis.findIndex((api) => api.id === apiId);
  if (head === 'resources' && index >= 0) {
    const dimensionIndex = apis[index]!.constraints?.indexOf(dimension ?? '') ?? -1;
    if (part === 'constraints' && dimensionIndex >= 0) return `constraint-${index}-${dimensionIndex}`;
    return `api-${index}`;
  }
  return head === 'resources' ? 'apis' : '';
}

/** The IDs of the app form's fields, by the API's field names (URI lists by their input's index). */
export function appFieldId(field: string, inputIndex: (list: 'redirect' | 'logout', sent: number) => number): string {
  const [head, index] = field.split('.');
  if (head === 'redirect_uris') return index === undefined ? 'redirect-0' : `redirect-${inputIndex('redirect', Number(index))}`;
  if (head === 'post_logout_redirect_uris') return index === undefined ? 'logout-0' : `logout-${inputIndex('logout', Number(index))}`;
  const ids: Record<string, string> = {
    name: 'app-name', description: 'app-description', client_type: 'type-confidential', pkce_enabled: 'app-pkce', backchannel_logout_uri: 'app-backchannel',
  };
  return ids[head ?? ''] ?? '';
}

export function landingPage(view: Pick<ViewContext, 't' | 'base'>, notice?: string): string {
  return `<h1>${e(view.t.product)}</h1>
${notice ? `<p class="notice" role="status">${e(notice)}</p>` : ''}
<p>${e(view.t.intro)}</p>
<p><a class="button primary" href="${view.base}/login">${e(view.t.signIn)}</a></p>`;
}

function header(view: ViewContext, user: { sub: string; name?: string; tenant?: string }): string {
  return `${view.productName ? `<p class="product-name">${e(view.productName)}</p>\n` : ''}<div class="header"><h1>${e(view.t.product)}</h1>
<form class="inline" method="post" action="${view.base}/logout">${csrfField(view)}<button class="secondary" type="submit">${e(view.t.signOut)}</button></form></div>
<p>${e(view.t.signedInAs(user.name ?? user.sub, user.sub, user.tenant))}</p>`;
}

export function noticeHtml(notice: { kind: 'ok' | 'error'; text: string } | undefined): string {
  if (!notice) return '';
  return notice.kind === 'ok' ? `<p class="notice" role="status">${e(notice.text)}</p>` : `<p class="error" role="alert">${e(notice.text)}</p>`;
}

function clientsTable(view: ViewContext, clients: ClientConfigurationWire[]): string {
  const { t } = view;
  if (!clients.length) return `<p class="muted">${e(t.clients.none)}</p>`;
  const rows = clients.map((client) => {
    const scopes = Object.entries(client.resources).map(([apiId, resource]) => {
      const api = view.apis.find((entry) => entry.id === apiId);
      const constraints = Object.entries(resource.constraints ?? {}).map(([dimension, values]) => `${dimension} = ${values.join(', ')}`).join('; ');
      return `<span class="muted">${e(api?.name ?? apiId)}:</span> ${e(resource.scopes.join(', '))}${constraints ? ` (${e(constraints)})` : ''}`;
    }).join('<br>');
    const id = encodeURIComponent(client.client_id);
    return `<tr>
<th scope="row">${e(client.name)}${client.description ? `<br><span class="muted">${e(client.description)}</span>` : ''}</th>
<td>${e(client.category)}</td>
<td><code>${e(client.client_id)}</code></td>
<td>${scopes}</td>
<td class="actions"><a href="${view.base}/client-configurations/${id}" aria-label="${e(`${t.edit} ${client.name}`)}">${e(t.edit)}</a>
<a href="${view.base}/client-configurations/${id}/secret" aria-label="${e(`${t.regenerate}: ${client.name}`)}">${e(t.regenerate)}</a>
<a href="${view.base}/client-configurations/${id}/delete" aria-label="${e(`${t.delete} ${client.name}`)}">${e(t.delete)}</a></td>
</tr>`;
  }).join('\n');
  return `<table aria-labelledby="clients-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.clients.category)}</th><th scope="col">${e(t.clientId)}</th><th scope="col">${e(t.clients.scopesColumn)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function appsTable(view: ViewContext, apps: AppRegistrationWire[]): string {
  const { t } = view;
  if (!apps.length) return `<p class="muted">${e(t.apps.none)}</p>`;
  const rows = apps.map((app) => {
    const id = encodeURIComponent(app.client_id);
    const regenerate = app.client_type === 'confidential'
      ? `<a href="${view.base}/app-registrations/${id}/secret" aria-label="${e(`${t.regenerate}: ${app.name}`)}">${e(t.regenerate)}</a>`
      : `<span class="muted">${e(t.apps.noSecret)}</span>`;
    return `<tr>
<th scope="row">${e(app.name)}${app.description ? `<br><span class="muted">${e(app.description)}</span>` : ''}</th>
<td>${e(app.client_type)}${app.client_type === 'confidential' && !app.pkce_enabled ? '<br><span class="muted">PKCE off</span>' : ''}</td>
<td><code>${e(app.client_id)}</code></td>
<td>${app.redirect_uris.map((uri) => `<code>${e(uri)}</code>`).join('<br>')}</td>
<td class="actions"><a href="${view.base}/app-registrations/${id}" aria-label="${e(`${t.edit} ${app.name}`)}">${e(t.edit)}</a>
${regenerate}
<a href="${view.base}/app-registrations/${id}/delete" aria-label="${e(`${t.delete} ${app.name}`)}">${e(t.delete)}</a></td>
</tr>`;
  }).join('\n');
  return `<table aria-labelledby="apps-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.apps.typeColumn)}</th><th scope="col">${e(t.clientId)}</th><th scope="col">${e(t.apps.redirectUris)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

export function consentsSection(view: ViewContext, consents: ConsentWire[] | undefined): string {
  const { t } = view;
  let content: string;
  if (!consents) content = `<p class="error" role="alert">${e(t.consents.loadFailed)}</p>`;
  else if (!consents.length) content = `<p class="muted">${e(t.consents.none)}</p>`;
  else {
    const rows = consents.map((consent) => {
      const name = consent.app_name ?? t.consents.deletedApp;
      const scopes = consent.scopes.map(({ scope }) => {
        const words = view.consentScopeWords(scope);
        return `<li>${e(words.api ? `${words.api}: ${words.description}` : words.description)}</li>`;
      }).join('');
      return `<tr>
<th scope="row">${e(name)}<br><code>${e(consent.client_id)}</code></th>
<td><ul>${scopes}</ul></td>
<td>${e(when(consent.updated_at))}</td>
<td><form method="post" action="${view.base}/consents/${encodeURIComponent(consent.client_id)}/revoke">${csrfField(view)}<button class="secondary" type="submit" aria-label="${e(t.consents.revokeLabel(name))}">${e(t.consents.revoke)}</button></form></td>
</tr>`;
    }).join('\n');
    content = `<table aria-labelledby="consents-heading"><thead><tr><th scope="col">${e(t.consents.app)}</th><th scope="col">${e(t.consents.may)}</th><th scope="col">${e(t.consents.since)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  }
  return `<section aria-labelledby="consents-heading">
<h2 id="consents-heading">${e(t.consents.heading)}</h2>
<p class="muted">${e(t.consents.lead)}</p>
${content}
</section>`;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/**
 * An event in words: what happened, who did it (a user's name when the account store knows it,
 * else her ID; the operator; a client by its name), to what (its name now, or its name when it was
 * deleted and its ID), and the details (fields changed, scopes, reasons, counts).
 */
function eventCells(view: ViewContext, event: AuditEventWire, names: ActivityNames, deletedNames: ReadonlyMap<string, string>): string[] {
  const { t } = view;
  const userName = (sub: string) => names.users.get(sub) ?? `${t.activity.actors.user ?? 'user'} ${sub}`;
  const { actor, target, details = {} } = event;
  let who: string;
  if (actor.type === 'user' && actor.id) who = userName(actor.id);
  else if (actor.type === 'client' && actor.id) who = `${t.activity.actors.client ?? 'client'} ${names.records.get(actor.id) ?? actor.id}`;
  else who = t.activity.actors[actor.type] ?? actor.type;
  let what = '';
  if (target) {
    const kind = t.activity.kinds[target.type] ?? target.type;
    if (target.type === 'user') what = `${kind} ${userName(target.id)}`;
    else if (target.type === 'client_configuration' || target.type === 'app_registration') {
      const name = names.records.get(target.id);
      const formerly = deletedNames.get(target.id);
      what = name !== undefined ? `${kind} ${name}` : formerly !== undefined ? t.activity.goneNamed(kind, formerly, target.id) : t.activity.gone(kind, target.id);
    } else what = `${kind} ${target.id}`;
  }
  const said: string[] = [];
  const d = t.activity.detail;
  if (typeof details.method === 'string' && typeof details.status === 'number') said.push(d.refused(details.method, String(details.status), typeof details.error === 'string' ? details.error : ''));
  if (typeof details.reason === 'string') said.push(d.reason(t.activity.reasons[details.reason] ?? details.reason));
  // Whose consent, when it is not the actor's own.
  if (typeof details.user === 'string' && details.user !== actor.id) said.push(d.user(userName(details.user)));
  if (strings(details.scopes).length) {
    said.push(d.scopes(strings(details.scopes).map((scope) => {
      const words = view.consentScopeWords(scope);
      return words.api ? `${words.api}: ${words.description}` : words.description;
    }).join('; ')));
  }
  if (strings(details.fields).length) said.push(d.fields(strings(details.fields).join(', ')));
  if (typeof details.name === 'string' && event.type.endsWith('.created')) said.push(d.name(details.name));
  if (typeof details.category === 'string') said.push(d.category(details.category));
  if (strings(details.apis).length) said.push(d.apis(strings(details.apis).map((id) => view.apis.find((api) => api.id === id)?.name ?? id).join(', ')));
  if (details.client_type === 'public' || details.client_type === 'confidential') said.push(d.clientType(details.client_type));
  if (strings(details.redirect_uris).length) said.push(d.redirectUris(strings(details.redirect_uris).join(' ')));
  if (typeof details.failures === 'number') said.push(d.failures(details.failures));
  if (typeof details.count === 'number' && details.count > 1) said.push(d.count(details.count));
  if (details.grant_ended === true) said.push(d.grantEnded);
  if (details.built_in === true) said.push(d.builtIn);
  if (typeof details.alg === 'string') said.push(d.alg(details.alg));
  return [
    e(when(event.time)),
    e(t.activity.types[event.type] ?? event.type),
    e(who),
    e(what),
    said.length ? `<ul class="details">${said.map((line) => `<li>${e(line)}</li>`).join('')}</ul>` : '',
    e(event.address ?? ''),
  ];
}

function activityTable(view: ViewContext, events: AuditEventWire[], names: ActivityNames): string {
  const { t } = view;
  if (!events.length) return `<p class="muted">${e(t.activity.none)}</p>`;
  // A deleted record's name, from the event of its deletion (or creation) on this page.
  const deletedNames = new Map<string, string>();
  for (const event of events) {
    if (event.target && typeof event.details?.name === 'string' && !deletedNames.has(event.target.id)) deletedNames.set(event.target.id, event.details.name);
  }
  const rows = events.map((event) => `<tr>${eventCells(view, event, names, deletedNames).map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n');
  const columns = [t.activity.when, t.activity.what, t.activity.who, t.activity.target, t.activity.details, t.activity.from];
  return `<table aria-labelledby="activity-heading"><thead><tr>${columns.map((column) => `<th scope="col">${e(column)}</th>`).join('')}</tr></thead><tbody>
${rows}
</tbody></table>`;
}

function platformAppsSection(view: ViewContext, apps: PlatformAppWire[]): string {
  const { t } = view;
  const rows = apps.map((app) => `<tr>
<th scope="row">${e(app.name)}${app.first_party ? ` <span class="muted">(${e(t.platformApps.firstParty)})</span>` : ''}${app.description ? `<br><span class="muted">${e(app.description)}</span>` : ''}</th>
<td>${e(app.registered_by === 'platform' ? t.platformApps.platform : t.platformApps.anotherOrganisation)}</td>
<td>${e(app.client_type)}</td>
<td><code>${e(app.client_id)}</code></td>
<td>${app.redirect_uris.map((uri) => `<code>${e(uri)}</code>`).join('<br>')}</td>
</tr>`).join('\n');
  const content = apps.length
    ? `<table aria-labelledby="platform-apps-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.platformApps.registeredBy)}</th><th scope="col">${e(t.apps.typeColumn)}</th><th scope="col">${e(t.clientId)}</th><th scope="col">${e(t.apps.redirectUris)}</th></tr></thead><tbody>
${rows}
</tbody></table>`
    : `<p class="muted">${e(t.platformApps.none)}</p>`;
  return `<section aria-labelledby="platform-apps-heading">
<h2 id="platform-apps-heading">${e(t.platformApps.heading)}</h2>
<p class="muted">${e(t.platformApps.lead)}</p>
${content}
</section>`;
}

/** What the home page shows of the organisation's setup to a user with the permission. */
export interface SetupView {
  clients: ClientConfigurationWire[];
  apps: AppRegistrationWire[];
  platformApps?: PlatformAppWire[];
  events?: AuditEventWire[];
  names: ActivityNames;
  /** Whether she can lift sign-in holds here (the host's AccountStore looks users up by username). */
  canUnlock: boolean;
}

/** The home page of a signed-in user: her organisation's setup (with the permission), her consents. */
export function dashboardPage(
  view: ViewContext,
  user: { sub: string; name?: string; tenant?: string },
  notice: { kind: 'ok' | 'error'; text: string } | undefined,
  setup: SetupView | 'forbidden' | 'failed',
  consents: ConsentWire[] | undefined,
): string {
  const { t } = view;
  let sections: string;
  if (setup === 'forbidden') {
    sections = `<section aria-labelledby="setup-heading"><h2 id="setup-heading">${e(t.clients.heading)} / ${e(t.apps.heading)}</h2><p class="permission">${e(t.permission)}</p></section>`;
  } else if (setup === 'failed') {
    sections = `<p class="error" role="alert">${e(t.loadFailed)}</p>`;
  } else {
    sections = `<section aria-labelledby="clients-heading">
<h2 id="clients-heading">${e(t.clients.heading)}</h2>
<p class="muted">${e(t.clients.lead)}</p>
${clientsTable(view, setup.clients)}
<p><a class="button primary" href="${view.base}/client-configurations/new">${e(t.clients.create)}</a></p>
</section>
<section aria-labelledby="apps-heading">
<h2 id="apps-heading">${e(t.apps.heading)}</h2>
<p class="muted">${e(t.apps.lead)}</p>
${appsTable(view, setup.apps)}
<p><a class="button primary" href="${view.base}/app-registrations/new">${e(t.apps.create)}</a></p>
</section>${setup.platformApps ? `\n${platformAppsSection(view, setup.platformApps)}` : ''}${setup.events ? `
<section aria-labelledby="activity-heading">
<h2 id="activity-heading">${e(t.activity.heading)}</h2>
<p class="muted">${e(t.activity.lead)}</p>
${activityTable(view, setup.events, setup.names)}
<p><a href="${view.base}/activity">${e(t.activity.all)}</a></p>
</section>` : ''}${setup.canUnlock ? `
<section aria-labelledby="unlock-heading">
<h2 id="unlock-heading">${e(t.unlock.heading)}</h2>
<p class="muted">${e(t.unlock.lead)}</p>
<p><a href="${view.base}/sign-ins/unlock">${e(t.unlock.link)}</a></p>
</section>` : ''}`;
  }
  return `${header(view, user)}
${noticeHtml(notice)}
${sections}
${consentsSection(view, consents)}`;
}

/**
 * The Activity page: a filter (a GET form: the type in words, a date range) and a page of events,
 * older ones a link away. `events` undefined: the filter was refused (`errors` say why, at its fields).
 */
export function activityPage(
  view: ViewContext,
  user: { sub: string; name?: string; tenant?: string },
  types: readonly string[],
  filter: ActivityFilter,
  errors: FieldErrors | undefined,
  events: AuditEventWire[] | undefined,
  names: ActivityNames,
  next: string | undefined,
): string {
  const { t } = view;
  const { type } = filter;
  const labelled = types.map((name) => [name, t.activity.types[name] ?? name] as const).sort((a, b) => a[1].localeCompare(b[1]));
  const options = [`<option value=""${type ? '' : ' selected'}>${e(t.activity.anyType)}</option>`, ...labelled.map(([name, label]) => `<option value="${e(name)}"${name === type ? ' selected' : ''}>${e(label)}</option>`)].join('');
  const kept = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''));
  const olderQuery = next ? new URLSearchParams({ ...kept, cursor: next }) : undefined;
  const date = (id: string, name: 'since' | 'until') => {
    const { attributes, message } = fieldError(id, errors, 'activity-date-hint');
    return `<div><label for="${id}">${e(t.activity[name])}</label>${message}<input id="${id}" name="${name}" type="date" value="${e(filter[name])}"${attributes}></div>`;
  };
  return `${header(view, user)}
<p><a href="${view.base}">${e(t.back)}</a></p>
<h2 id="activity-heading">${e(t.activity.heading)}</h2>
<form method="get" action="${view.base}/activity" class="filter" novalidate>
${errorSummary(view, errors)}
<div><label for="activity-type">${e(t.activity.type)}</label><select id="activity-type" name="type">${options}</select></div>
${date('activity-since', 'since')}
${date('activity-until', 'until')}
<button class="secondary" type="submit">${e(t.activity.filter)}</button>
<p class="hint" id="activity-date-hint">${e(t.activity.dateHint)}</p>
</form>
${events ? activityTable(view, events, names) : ''}
<p>${olderQuery ? `<a href="${view.base}/activity?${e(olderQuery.toString())}">${e(t.activity.older)}</a>` : ''}</p>`;
}

/** What a user without the permission gets instead of a form or a confirmation (403): which permission she lacks. */
export function forbiddenPage(view: ViewContext, user: { sub: string; name?: string; tenant?: string }): string {
  const { t } = view;
  return `${header(view, user)}
<p><a href="${view.base}">${e(t.back)}</a></p>
<h2 id="forbidden-heading">${e(t.forbidden.heading)}</h2>
<p class="permission" role="alert">${e(t.permission)}</p>
<p>${e(t.forbidden.again)}</p>`;
}

/** The form that lifts a user's sign-in hold. */
export function unlockPage(view: ViewContext, username: string, errors: FieldErrors | undefined): string {
  const { t } = view;
  return `<p><a href="${view.base}">${e(t.back)}</a></p>
<h1 id="form-heading">${e(t.unlock.title)}</h1>
<p>${e(t.unlock.lead)}</p>
<form method="post" action="${view.base}/sign-ins/unlock" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
${errorSummary(view, errors)}
${textField('unlock-username', t.unlock.username, 'username', username, errors, { required: true, hint: t.unlock.usernameHint })}
<button class="primary" type="submit">${e(t.unlock.button)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}

/** The form of a client configuration: new (no ID) or an edit. */
export function clientFormPage(view: ViewContext, values: ClientFormValues, errors: FieldErrors | undefined, existing?: { clientId: string; name: string }): string {
  const { t } = view;
  const action = existing ? `${view.base}/client-configurations/${encodeURIComponent(existing.clientId)}` : `${view.base}/client-configurations`;
  const heading = existing ? t.clients.editHeading(existing.name) : t.clients.create;
  const apiFieldsets = view.apis.map((api, index) => {
    const { attributes, message } = fieldError(`api-${index}`, errors);
    const scopes = Object.keys(api.scopes).map((scope, scopeIndex) => {
      const id = `scope-${index}-${scopeIndex}`;
      return `<div class="check"><input type="checkbox" id="${id}" name="scope" value="${e(scope)}"${values.scopes.includes(scope) ? ' checked' : ''}><label for="${id}"><code>${e(scope)}</code> ${e(view.scopeWords(scope))}</label></div>`;
    }).join('\n');
    const constraints = (api.constraints ?? []).map((dimension, dimensionIndex) => {
      const id = `constraint-${index}-${dimensionIndex}`;
      return textField(id, t.clients.constraint(dimension), `constraint.${api.id}.${dimension}`, values.constraints[`${api.id}\n${dimension}`] ?? '', errors, { hint: t.clients.constraintHint, max: 2000 });
    }).join('\n');
    return `<fieldset id="api-${index}" tabindex="-1"${attributes}><legend>${e(api.name)}</legend>${message}
${scopes}
${constraints}
</fieldset>`;
  }).join('\n');
  const apisError = fieldError('apis', errors, 'apis-hint');
  return `<p><a href="${view.base}">${e(t.back)}</a></p>
<h1 id="form-heading">${e(heading)}</h1>
<form method="post" action="${action}" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
${errorSummary(view, errors)}
${textField('client-name', t.name, 'name', values.name, errors, { required: true })}
${textField('client-category', t.clients.category, 'category', values.category, errors, { required: true, hint: t.clients.categoryHint })}
${textArea('client-description', `${t.description} ${t.optional}`, 'description', values.description, errors)}
<div id="apis" tabindex="-1" role="group" aria-labelledby="apis-label"${apisError.attributes}><p class="group-label" id="apis-label">${e(t.clients.apis)}</p><p class="hint" id="apis-hint">${e(t.clients.apisHint)}</p>${apisError.message}
${apiFieldsets}
</div>
<button class="primary" type="submit">${e(existing ? t.clients.save : t.clients.create)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}

function uriList(view: ViewContext, list: 'redirect' | 'logout', uris: string[], errors: FieldErrors | undefined): string {
  const { t } = view;
  const name = list === 'redirect' ? 'redirect_uri' : 'post_logout_redirect_uri';
  const label = list === 'redirect' ? t.apps.redirectUri : t.apps.postLogoutUri;
  const hintId = `${list}-hint`;
  const fields = uris.map((uri, index) => {
    const id = `${list}-${index}`;
    const { attributes, message } = fieldError(id, errors, hintId);
    return `<label for="${id}">${e(label(index + 1))}</label>${message}
<input id="${id}" name="${name}" value="${e(uri)}" maxlength="2000" inputmode="url"${attributes}>`;
  }).join('\n');
  return `<fieldset><legend>${e(list === 'redirect' ? t.apps.redirectUris : t.apps.postLogoutUris)}</legend>
<p class="hint" id="${hintId}">${e(list === 'redirect' ? t.apps.redirectHint : t.apps.postLogoutHint)}</p>
${fields}
<button class="secondary" type="submit" name="more" value="${list}">${e(list === 'redirect' ? t.apps.addRedirectUri : t.apps.addPostLogoutUri)}</button>
</fieldset>`;
}

/** The form of an app registration: new (no ID) or an edit (with the type change's consequences). */
export function appFormPage(view: ViewContext, values: AppFormValues, errors: FieldErrors | undefined, existing?: { clientId: string; name: string }): string {
  const { t } = view;
  const action = existing ? `${view.base}/app-registrations/${encodeURIComponent(existing.clientId)}` : `${view.base}/app-registrations`;
  const heading = existing ? t.apps.editHeading(existing.name) : t.apps.create;
  const typeError = fieldError('type-confidential', errors, existing ? 'type-warning' : undefined);
  const pkceError = fieldError('app-pkce', errors, 'app-pkce-hint');
  const radio = (type: 'confidential' | 'public') =>
    `<div class="check"><input type="radio" id="type-${type}" name="client_type" value="${type}"${values.clientType === type ? ' checked' : ''}${typeError.attributes}><label for="type-${type}">${e(t.apps[type])}</label></div>`;
  return `<p><a href="${view.base}">${e(t.back)}</a></p>
<h1 id="form-heading">${e(heading)}</h1>
<form method="post" action="${action}" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
<button class="default-submit" type="submit" name="save" value="1" tabindex="-1" aria-hidden="true">${e(existing ? t.apps.save : t.apps.create)}</button>
${errorSummary(view, errors)}
${textField('app-name', t.name, 'name', values.name, errors, { required: true })}
${textArea('app-description', `${t.description} ${t.optional}`, 'description', values.description, errors)}
${uriList(view, 'redirect', values.redirectUris, errors)}
<fieldset><legend>${e(t.apps.type)}</legend>
${existing ? `<p class="warning" id="type-warning">${e(t.apps.typeChangeWarning)}</p>` : ''}${typeError.message}
${radio('confidential')}
${radio('public')}
</fieldset>
<div class="check"><input type="checkbox" id="app-pkce" name="pkce_enabled" value="on"${values.pkceEnabled ? ' checked' : ''}${pkceError.attributes}><label for="app-pkce">${e(t.apps.pkce)}</label></div>
<p class="hint warning" id="app-pkce-hint">${e(t.apps.pkceHint)}</p>${pkceError.message}
${uriList(view, 'logout', values.postLogoutRedirectUris, errors)}
${textField('app-backchannel', t.apps.backchannel, 'backchannel_logout_uri', values.backchannelLogoutUri, errors, { hint: t.apps.backchannelHint, max: 2000 })}
<button class="primary" type="submit" name="save" value="1">${e(existing ? t.apps.save : t.apps.create)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}

/** A confirmation (delete, regenerate): what will happen, a button that does it, a way back. */
export function confirmPage(view: ViewContext, heading: string, warning: string, action: string, button: string, danger: boolean): string {
  return `<p><a href="${view.base}">${e(view.t.back)}</a></p>
<h1>${e(heading)}</h1>
<p class="warning">${e(warning)}</p>
<form method="post" action="${action}">${csrfField(view)}
<button class="${danger ? 'danger' : 'primary'}" type="submit">${e(button)}</button>
<a class="button secondary" href="${view.base}">${e(view.t.cancel)}</a>
</form>`;
}

/** The secret, once: read-only field, copy button, the warning. */
export function secretPageBody(view: ViewContext, shown: { what: 'client_configuration' | 'app_registration'; name: string; clientId: string; clientSecret: string; regenerated: boolean }): string {
  const { t } = view;
  const what = t.secret.what[shown.what];
  return `<h1>${e(shown.regenerated ? t.secret.newHeading(shown.name) : t.secret.createdHeading(shown.name))}</h1>
<p>${e(shown.regenerated ? t.secret.regenerated(what) : t.secret.created(what))}</p>
<p>${e(t.clientId)} <code id="client-id">${e(shown.clientId)}</code></p>
<label for="secret">${e(t.secret.label)}</label>
<input id="secret" class="secret" value="${e(shown.clientSecret)}" readonly autocomplete="off" spellcheck="false" aria-describedby="secret-once">
<button class="primary" type="button" data-copy="secret">${e(t.secret.copy)}</button>
<p id="copy-status" role="status" aria-live="polite"></p>
<p id="secret-once"><strong>${e(t.secret.once)}</strong> ${e(t.secret.onceMore)}</p>
<p><a href="${view.base}">${e(t.back)}</a></p>`;
}

/** A text as a string literal that cannot end its script element. */
function scriptString(text: string): string {
  return JSON.stringify(text).replace(/</g, '\\u003c');
}

/** The copy button of the secret page (allowed by this page's script nonce only). */
export function copyScript(t: PortalText): string {
  return `
(function () {
  var status = document.getElementById('copy-status');
  function said(ok) { status.textContent = ok ? ${scriptString(t.secret.copied)} : ${scriptString(t.secret.copyFailed)}; }
  function fallback(input) { input.focus(); input.select(); try { said(document.execCommand('copy')); } catch (e) { said(false); } }
  // Not in the browser's back/forward cache either: the field empties as the page is left.
  window.addEventListener('pagehide', function () { var field = document.getElementById('secret'); if (field) field.value = ''; });
  window.addEventListener('pageshow', function (event) { if (event.persisted) window.location.reload(); });
  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i += 1) {
    buttons[i].addEventListener('click', function (event) {
      var input = document.getElementById(event.currentTarget.getAttribute('data-copy'));
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { said(true); }, function () { fallback(input); });
      } else {
        fallback(input);
      }
    });
  }
})();
`;
}

/** The portal's stylesheet, added to the sign-in pages' (wider, with tables and forms). */
export const PORTAL_STYLE = `
main{max-width:64rem}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-top:1px solid #d6dae3;padding-top:1.2rem}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid #e3e6ec}
td code,p code,th code{font-size:.85rem;word-break:break-all}
td form{margin:0}td button,.inline button{margin-top:0;padding:.35rem .8rem;font-size:.9rem}
.actions a{display:inline-block;margin:0 .6rem .3rem 0}
select,textarea{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #8a93a6;border-radius:4px;font-size:1rem;background:#fff;font-family:inherit}
select:focus,textarea:focus,a:focus,input[type=checkbox]:focus,input[type=radio]:focus,fieldset:focus,div:focus{outline:3px solid #2f6fde;outline-offset:2px}
fieldset{border:1px solid #d6dae3;border-radius:6px;margin:1rem 0;padding:.6rem 1rem 1rem}
legend,.group-label{font-weight:600;padding:0 .3rem;margin:.8rem 0 .3rem}
.check{display:flex;align-items:baseline;gap:.5rem;margin:.4rem 0}
.check input{width:auto;margin:0}.check label{display:inline;font-weight:400;margin:0}
.hint{color:#5b6478;margin:.2rem 0 .4rem;font-size:.92rem}
.warning{background:#fff4e0;color:#5c3b00;padding:.6rem;border-radius:4px}
.field-error{color:#a4161a;font-weight:600;margin:.2rem 0}
[aria-invalid=true]{border-color:#a4161a;border-width:2px}
.notice{color:#0f5132;background:#e3f4ea;padding:.6rem;border-radius:4px}
.permission{background:#fff4e0;color:#5c3b00;padding:.8rem;border-radius:4px}
.header{display:flex;justify-content:space-between;align-items:center;gap:1rem;flex-wrap:wrap}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace}
a.button{display:inline-block;margin-top:1.2rem;margin-right:.6rem;padding:.6rem 1.2rem;border-radius:4px;border:1px solid #1f4fa8;text-decoration:none}
a.button.primary{background:#1f5fcf;color:#fff}a.button.secondary{background:#fff;color:#1f4fa8}
button{margin-right:.6rem}
th .muted{font-weight:400}
/* The form's default button (Enter in a field submits the form, not "add another URI"): first in the form, out of sight and of the tab order. */
.default-submit{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);border:0}
.product-name{font-weight:600;color:#5b6478;margin:0 0 .3rem;letter-spacing:.02em}
.danger{background:#a4161a;color:#fff;border-color:#7a1014}
.filter{display:flex;gap:.6rem;align-items:end;flex-wrap:wrap}.filter select,.filter input{width:auto}.filter label{margin:0}.filter button{margin-top:0}.filter .hint,.filter .error{flex-basis:100%}.filter .field-error{max-width:16rem}
ul.details{margin:0;padding-left:1rem}
@media (max-width:40rem){main{margin:0;border-radius:0;padding:1rem}table,thead,tbody,tr,th,td{display:block}thead{position:absolute;left:-9999px}tr{border-bottom:1px solid #d6dae3;padding:.4rem 0}th,td{border:0;padding:.2rem 0}}
`;
