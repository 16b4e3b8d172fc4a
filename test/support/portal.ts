import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { PORTAL_SESSION_SECONDS } from '../../policies/lifetimes.js';
import type { AuthServerOptions } from '../../src/index.js';
import { PortalSessions } from '../../src/portal/sessions.js';
import { testAccounts } from './accounts.js';
import { startRedis, type RedisServer } from './redis.js';
import { startServer, type RunningServer } from './server.js';
import { UserAgent, type Step } from './user-agent.js';

/* Signing in to the portal over HTTP (UserAgent), with what the sign-in may ask on the way. */

/** The CSRF token of a portal page's forms. */
export const csrfOf = (step: Step): string => /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;

/** The second-factor page's first form (the app's code) with `code` (its own hidden fields only). */
export async function secondFactor(agent: UserAgent, step: Step, code: string): Promise<Step> {
  const [form, action] = /<form method="post" action="([^"]+\/second-factor)"[\s\S]*?<\/form>/.exec(step.html) ?? [];
  if (!form || !action) throw new Error(`not the second-factor page:\n${step.html}`);
  const fields = new URLSearchParams([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]): [string, string] => [name!, value!]));
  fields.set('code', code);
  return agent.request(action.replace(/&amp;/g, '&'), { method: 'POST', body: fields.toString() });
}

/**
 * The password page's form answered as `sub` (password `${sub}-password`); then what the sign-in
 * asks: ending the browser's sign-in session of another user (the engine's confirmation), the
 * second factor's code (`code`), the consent.
 */
export async function signInAs(agent: UserAgent, step: Step, sub: string, code?: () => string): Promise<Step> {
  if (!step.html.includes('name="password"')) throw new Error(`not the password page:\n${step.html}`);
  let next = await agent.submit(step, { username: sub, password: `${sub}-password` });
  const confirm = /action="([^"]+\/session\/end\/confirm)"[\s\S]*?name="xsrf" value="([^"]+)"/.exec(next.html);
  if (confirm) next = await agent.request(confirm[1]!, { method: 'POST', body: new URLSearchParams({ xsrf: confirm[2]!, logout: 'yes' }).toString() });
  if (code && next.html.includes('name="code"')) next = await secondFactor(agent, next, code());
  if (next.html.includes('value="allow"')) next = await agent.submit(next, { decision: 'allow' });
  return next;
}

/** A new browser signed in to the portal at `{baseUrl}/portal` as `sub`: the agent and its CSRF token. */
export async function portalSignedIn(baseUrl: string, sub: string, name: string, code?: () => string): Promise<{ agent: UserAgent; csrf: string }> {
  const agent = new UserAgent(baseUrl);
  const home = await signInAs(agent, await agent.request('/portal/login'), sub, code);
  if (!home.html.includes(`Signed in as ${name} (${sub})`)) throw new Error(`not signed in:\n${home.html}`);
  return { agent, csrf: csrfOf(home) };
}

/** Makes the agent's last sign-in `seconds` old (its session's `authTime`, through `sessions` on the server's store). */
export async function signedInAgo(sessions: PortalSessions, agent: UserAgent, seconds: number): Promise<void> {
  const id = agent.cookie('portal_session')!;
  const session = await sessions.get(id);
  if (typeof session?.authTime !== 'number') throw new Error('no sign-in time in the session');
  await sessions.save(id, { ...session, authTime: Math.floor(Date.now() / 1000) - seconds });
}

/**
 * The page before a sign-in again (src/portal/reauth.ts), checked, and its link followed: the
 * sign-in's password page.
 */
export async function signInAgainFrom(agent: UserAgent, step: Step): Promise<Step> {
  if (!step.html.includes('action="/portal/reauth"') || !step.html.includes('Confirm it is you')) throw new Error(`not the page before a sign-in again:\n${step.html}`);
  return agent.request('/portal/reauth', { method: 'POST', body: new URLSearchParams({ csrf: csrfOf(step) }).toString() });
}

/** A portal's server on a Redis of its own, and the test's own view of that Redis. */
export interface PortalOnRedis {
  redis: RedisServer;
  server: RunningServer;
  /** A second store on the same Redis, the test's own. */
  store: Store;
  /** The portal's sessions through `store` (to make a sign-in old). */
  sessions: PortalSessions;
  /** Closes the store, stops the server, then Redis. */
  stop(): Promise<void>;
}

/**
 * A redis-server, then an auth server on it with the portal on, `users` (passwords as given) and
 * `cookieKey`. Its users sign in with the password alone (second factor optional in every tenant)
 * unless `options` (spread last) say otherwise. `hostName` as in startServer.
 */
export async function startPortalOnRedis(
  users: Parameters<typeof testAccounts>[0],
  cookieKey: string,
  options: Partial<AuthServerOptions> = {},
  at: { hostName?: string } = {},
): Promise<PortalOnRedis> {
  const redis = await startRedis();
  let server: RunningServer | undefined;
  let store: Store;
  try {
    server = await startServer({
      store: { type: 'redis', url: redis.url }, accounts: testAccounts(users), cookieKeys: [cookieKey], portal: { enabled: true },
      tenantPolicy: () => ({ secondFactor: 'optional' }),
      ...options,
    }, at);
    store = await createRedisStore({ url: redis.url });
  } catch (error) {
    await server?.stop();
    await redis.stop();
    throw error;
  }
  const sessions = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [cookieKey], PORTAL_SESSION_SECONDS);
  return {
    redis, server, store, sessions,
    async stop() {
      await store.close();
      await server.stop();
      await redis.stop();
    },
  };
}
