import { escapeHtml as e } from '../../pages/html.js';
import type { PortalText } from '../text.js';
import type { AuditEventWire } from '../wire.js';
import { errorSummary, fieldError, header, when, type FieldErrors, type PageUser, type ViewContext } from './parts.js';

/* The Activity: the organisation's audit events in words, on the home page and a page of its own. */

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

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** What the cells of an event know beyond the event: names, and the page's deleted records' names. */
interface EventNames {
  /** A user's name, or her ID (with the word for a user) when it is not known. */
  user: (sub: string) => string;
  names: ActivityNames;
  /** A deleted record's name, from the event of its deletion (or creation) on this page. */
  deleted: ReadonlyMap<string, string>;
}

/** Who did it: a user's name when the account store knows it, else her ID; the operator; a client by its name. */
function actorWords(t: PortalText, actor: AuditEventWire['actor'], known: EventNames): string {
  if (actor.type === 'user' && actor.id) return known.user(actor.id);
  if (actor.type === 'client' && actor.id) return `${t.activity.actors.client ?? 'client'} ${known.names.records.get(actor.id) ?? actor.id}`;
  return t.activity.actors[actor.type] ?? actor.type;
}

/** To what: its name now, or (gone) its name when it was deleted and its ID. */
function targetWords(t: PortalText, target: AuditEventWire['target'], known: EventNames): string {
  if (!target) return '';
  const kind = t.activity.kinds[target.type] ?? target.type;
  if (target.type === 'user') return `${kind} ${known.user(target.id)}`;
  if (target.type !== 'client_configuration' && target.type !== 'app_registration') return `${kind} ${target.id}`;
  const name = known.names.records.get(target.id);
  const formerly = known.deleted.get(target.id);
  if (name !== undefined) return `${kind} ${name}`;
  return formerly !== undefined ? t.activity.goneNamed(kind, formerly, target.id) : t.activity.gone(kind, target.id);
}

/** The details in words: fields changed, scopes, reasons, counts. */
function detailWords(view: ViewContext, event: AuditEventWire, known: EventNames): string[] {
  const { t } = view;
  const { actor, details = {} } = event;
  const said: string[] = [];
  const d = t.activity.detail;
  if (typeof details.method === 'string' && typeof details.status === 'number') said.push(d.refused(details.method, String(details.status), typeof details.error === 'string' ? details.error : ''));
  if (typeof details.reason === 'string') said.push(d.reason(t.activity.reasons[details.reason] ?? details.reason));
  // Whose consent, when it is not the actor's own.
  if (typeof details.user === 'string' && details.user !== actor.id) said.push(d.user(known.user(details.user)));
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
  // How a client authenticates (created: a method other than the default; updated: from and to) and its DPoP rule.
  const words = t.clientAuth;
  const method = details.token_endpoint_auth_method as unknown;
  const methodWords = (name: unknown) => (typeof name === 'string' ? words.methods[name] ?? name : '');
  if (typeof method === 'string' && method !== 'client_secret_basic') said.push(words.method(methodWords(method)));
  else if (typeof method === 'object' && method !== null && 'from' in method && 'to' in method) said.push(words.methodChanged(methodWords(method.from), methodWords(method.to)));
  if (typeof details.dpop === 'string') said.push(words.dpopRule(words.dpopRules[details.dpop] ?? details.dpop));
  return said;
}

/** An event in words: when, what happened, who did it, to what, the details, from where. */
function eventCells(view: ViewContext, event: AuditEventWire, known: EventNames): string[] {
  const { t } = view;
  const said = detailWords(view, event, known);
  return [
    e(when(event.time)),
    e(t.activity.types[event.type] ?? event.type),
    e(actorWords(t, event.actor, known)),
    e(targetWords(t, event.target, known)),
    said.length ? `<ul class="details">${said.map((line) => `<li>${e(line)}</li>`).join('')}</ul>` : '',
    e(event.address ?? ''),
  ];
}

/** The table of a page of events (on the home page and the Activity page). */
export function activityTable(view: ViewContext, events: AuditEventWire[], names: ActivityNames): string {
  const { t } = view;
  if (!events.length) return `<p class="muted">${e(t.activity.none)}</p>`;
  // A deleted record's name, from the event of its deletion (or creation) on this page.
  const deletedNames = new Map<string, string>();
  for (const event of events) {
    if (event.target && typeof event.details?.name === 'string' && !deletedNames.has(event.target.id)) deletedNames.set(event.target.id, event.details.name);
  }
  const known: EventNames = { user: (sub) => names.users.get(sub) ?? `${t.activity.actors.user ?? 'user'} ${sub}`, names, deleted: deletedNames };
  const rows = events.map((event) => `<tr>${eventCells(view, event, known).map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n');
  const columns = [t.activity.when, t.activity.what, t.activity.who, t.activity.target, t.activity.details, t.activity.from];
  return `<table aria-labelledby="activity-heading"><thead><tr>${columns.map((column) => `<th scope="col">${e(column)}</th>`).join('')}</tr></thead><tbody>
${rows}
</tbody></table>`;
}

/**
 * The Activity page: a filter (a GET form: the type in words, a date range) and a page of events,
 * older ones a link away. `events` undefined: the filter was refused (`errors` say why, at its fields).
 */
export function activityPage(
  view: ViewContext,
  user: PageUser,
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
