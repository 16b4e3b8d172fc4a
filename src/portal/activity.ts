import type { Context } from 'koa';
import { AUDIT_CURSOR_SHAPE, AUDIT_EVENT_TYPES } from '../audit/trail.js';
import { listOf, type ApiAnswer } from './api-client.js';
import type { PortalKit } from './kit.js';
import { failed } from './outcomes.js';
import type { PortalCall } from './routes.js';
import type { Current } from './session-cookies.js';
import type { PortalText } from './text.js';
import { activityPage, type ActivityFilter, type ActivityNames } from './views/activity.js';
import type { FieldErrors } from './views/parts.js';
import type { AppRegistrationWire, AuditEventWire, ClientConfigurationWire, PlatformAppWire } from './wire.js';

/*
 * THE ACTIVITY: the organisation's audit trail in words, a page at a time, filtered by type and by
 * dates (whole UTC days). The IDs of its events are named: the organisation's users by the host's
 * account store, the records by the APIs' lists of what she can see.
 */

/** A date of the Activity filter (UTC). */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Events on a page. */
const PAGE_SIZE = '50';

/** What the Activity names records by: the lists of what she can see. */
export interface NamedRecords {
  clients: ClientConfigurationWire[];
  apps: AppRegistrationWire[];
  platformApps: PlatformAppWire[];
}

/** Whether a date as typed is a day of the calendar (`YYYY-MM-DD`). */
function isDay(value: string): boolean {
  return DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
}

/** The Activity filter of a query: each value once, as typed; what is wrong with it, at its field. */
export function activityFilter(query: Context['query'], t: PortalText): { filter: ActivityFilter; errors: FieldErrors } {
  const one = (name: string) => (typeof query[name] === 'string' ? query[name].trim() : '');
  const type = (AUDIT_EVENT_TYPES as readonly string[]).includes(one('type')) ? one('type') : '';
  const filter = { type, since: one('since'), until: one('until') };
  const errors: FieldErrors = new Map();
  if (filter.since && !isDay(filter.since)) errors.set('activity-since', t.activity.badDate(t.activity.since));
  if (filter.until && !isDay(filter.until)) errors.set('activity-until', t.activity.badDate(t.activity.until));
  if (!errors.size && filter.since && filter.until && filter.until < filter.since) errors.set('activity-until', t.activity.badRange);
  return { filter, errors };
}

/** The audit API's query of a filter and a page's cursor (one of the trail's, else none: the first page). */
export function activityQuery(filter: ActivityFilter, cursor: unknown): URLSearchParams {
  const kept = typeof cursor === 'string' && AUDIT_CURSOR_SHAPE.test(cursor) ? cursor : '';
  return new URLSearchParams({
    limit: PAGE_SIZE,
    ...(filter.type ? { type: filter.type } : {}),
    // Whole days, in UTC (as the page shows times).
    ...(filter.since ? { since: `${filter.since}T00:00:00.000Z` } : {}),
    ...(filter.until ? { until: `${filter.until}T23:59:59.999Z` } : {}),
    ...(kept ? { cursor: kept } : {}),
  });
}

/** The IDs of events that name users: who acted, on whom, whose consent. */
function subsOf(events: AuditEventWire[]): Set<string> {
  const subs = new Set<string>();
  for (const event of events) {
    if (event.actor.type === 'user' && event.actor.id) subs.add(event.actor.id);
    if (event.target?.type === 'user') subs.add(event.target.id);
    if (typeof event.details?.user === 'string') subs.add(event.details.user);
  }
  return subs;
}

/**
 * The names behind the IDs of some events: the organisation's users who acted (by the host's
 * account store, only users of her tenant), and the records she can see (her tenant's and the
 * platform's apps that serve it, as the APIs list them).
 */
export async function namesOf(kit: PortalKit, now: Current, events: AuditEventWire[], lists: NamedRecords): Promise<ActivityNames> {
  const records = new Map<string, string>();
  for (const record of [...lists.platformApps, ...lists.clients, ...lists.apps]) records.set(record.client_id, record.name);
  const users = new Map<string, string>();
  const tenant = now.session.user?.tenant;
  await Promise.all([...subsOf(events)].map(async (sub) => {
    const account = await kit.setup.accounts?.findAccount(sub).catch(() => undefined);
    if (account && account.tenant === tenant && typeof account.claims?.name === 'string') users.set(sub, account.claims.name);
  }));
  return { users, records };
}

/** The lists of answers of the APIs that name records. */
export function namedRecords(clients: ApiAnswer | undefined, apps: ApiAnswer | undefined, platformApps: ApiAnswer | undefined): NamedRecords {
  return {
    clients: listOf<ClientConfigurationWire>(clients, 'client_configurations'),
    apps: listOf<AppRegistrationWire>(apps, 'app_registrations'),
    platformApps: listOf<PlatformAppWire>(platformApps, 'platform_apps'),
  };
}

/** GET /activity: a page of the organisation's events, filtered (a refused filter said at its fields, 400). */
export async function activity(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  const { api, t, pages } = kit;
  const { filter, errors } = activityFilter(ctx.query, t);
  const user = now.session.user!;
  if (errors.size) {
    await kit.cookies.save(ctx, now);
    const noNames: ActivityNames = { users: new Map(), records: new Map() };
    return pages.send(ctx, t.activity.heading, activityPage(pages.view(now.session), user, AUDIT_EVENT_TYPES, filter, errors, undefined, noNames, undefined), { status: 400 });
  }
  const [answer, clients, apps, platformApps] = await Promise.all([
    api.call(now.session, 'GET', `audit-events?${activityQuery(filter, ctx.query.cursor)}`),
    api.call(now.session, 'GET', 'client-configurations'),
    api.call(now.session, 'GET', 'app-registrations'),
    api.call(now.session, 'GET', 'platform-apps'),
  ]);
  await kit.cookies.save(ctx, now);
  if (answer.status !== 200) return failed(kit, ctx, now, answer);
  const events = listOf<AuditEventWire>(answer, 'events');
  const names = await namesOf(kit, now, events, namedRecords(clients, apps, platformApps));
  const next = typeof answer.body.next === 'string' ? answer.body.next : undefined;
  pages.send(ctx, t.activity.heading, activityPage(pages.view(now.session), user, AUDIT_EVENT_TYPES, filter, undefined, events, names, next));
}
