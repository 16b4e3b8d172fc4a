import { listOf, type ApiAnswer } from './api-client.js';
import { namedRecords, namesOf } from './activity.js';
import type { PortalKit } from './kit.js';
import { mayManage } from './outcomes.js';
import type { PortalCall } from './routes.js';
import type { Current } from './session-cookies.js';
import type { SetupView } from './views/home.js';
import { dashboardPage } from './views/home.js';
import type { AuditEventWire, ConsentWire } from './wire.js';

/** The APIs' answers the home page is made of (the setup's only with the management right). */
interface HomeAnswers {
  consents: ApiAnswer;
  clients?: ApiAnswer | undefined;
  apps?: ApiAnswer | undefined;
  platformApps?: ApiAnswer | undefined;
  activity?: ApiAnswer | undefined;
}

/** What the home page shows of the organisation's setup: its lists, or why not. */
async function setupViewOf(kit: PortalKit, now: Current, answers: HomeAnswers): Promise<SetupView | 'forbidden' | 'failed'> {
  const { clients, apps, platformApps, activity } = answers;
  if (!clients || !apps || clients.status === 403 || apps.status === 403) return 'forbidden';
  if (clients.status !== 200 || apps.status !== 200) return 'failed';
  const lists = namedRecords(clients, apps, platformApps);
  const events = activity?.status === 200 ? listOf<AuditEventWire>(activity, 'events') : undefined;
  return {
    ...lists,
    ...(platformApps?.status === 200 ? {} : { platformApps: undefined }),
    ...(events ? { events } : {}),
    names: await namesOf(kit, now, events ?? [], lists),
    canUnlock: kit.setup.canUnlock,
  };
}

/** The APIs' answers of the home page: her consents, and the setup when she may manage it. */
async function homeAnswers(kit: PortalKit, now: Current, manage: boolean): Promise<HomeAnswers> {
  const { api } = kit;
  const { session } = now;
  // Without the management right nothing of the organisation's setup is asked for: the APIs
  // would only refuse (and record the refusal).
  const [consents, clients, apps, platformApps, activity] = await Promise.all([
    api.call(session, 'GET', 'consents'),
    ...(manage
      ? [
        api.call(session, 'GET', 'client-configurations'),
        api.call(session, 'GET', 'app-registrations'),
        api.call(session, 'GET', 'platform-apps'),
        api.call(session, 'GET', 'audit-events?limit=10'),
      ]
      : []),
  ]);
  return { consents: consents!, clients, apps, platformApps, activity };
}

/** GET /: the home page of a signed-in user (the notice the last action left, shown once). */
export async function home(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  const { session } = now;
  const notice = session.notice;
  if (notice) {
    delete session.notice;
    await kit.cookies.save(ctx, now);
  }
  const answers = await homeAnswers(kit, now, await mayManage(kit, ctx, now));
  const setupView = await setupViewOf(kit, now, answers);
  await kit.cookies.save(ctx, now);
  const consents = answers.consents.status === 200 ? (answers.consents.body.consents ?? []) as ConsentWire[] : undefined;
  kit.pages.send(ctx, kit.t.product, dashboardPage(kit.pages.view(session), session.user!, notice, setupView, consents));
}
