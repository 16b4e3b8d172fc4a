import * as client from 'openid-client';
import type { Account, AccountStore, AuthServerOptions } from '../../src/index.js';
import { testAccounts } from './accounts.js';
import { startServer, type RunningServer } from './server.js';
import { passUpstreamSignIn, startUpstreamProvider, type RunningUpstreamProvider, type UpstreamClient, type UpstreamProviderOptions } from './upstream-provider.js';
import { pkcePair, UserAgent, type Step } from './user-agent.js';

/*
 * ENTERPRISE SIGN-IN FOR TESTS: our server with a tenant's app, a real upstream provider
 * (test/support/upstream-provider.ts) with our server registered as its client, a connection of the
 * tenant to it, and the steps of a sign-in through it over HTTP.
 */

export const APP_REDIRECT = 'https://app.example.com/cb';
/** Our client at the upstream provider. */
export const UPSTREAM_CLIENT = { id: 'talent-auth-at-acme', secret: 'upstream-client-secret-0123456789' };

export interface FederationRig {
  server: RunningServer;
  upstream: RunningUpstreamProvider;
  /** The app (of `tenant`), as openid-client knows it. */
  app: { clientId: string; config: client.Configuration };
  connection: { id: string; name: string };
  stop(): Promise<void>;
}

export interface RigOptions {
  tenant?: string;
  domains?: string[];
  users?: UpstreamProviderOptions['users'];
  strength?: UpstreamProviderOptions['strength'];
  accounts?: Array<Account & { password: string }>;
  accountStore?: AccountStore;
  server?: Partial<AuthServerOptions>;
  connection?: Record<string, unknown>;
  /** The app's tenant (default: the connection's); `null`: a platform app. */
  appTenant?: string | null;
  /** Changes to our client's registration at the provider (a field `undefined`: left out), e.g. private_key_jwt with our jwks_uri. */
  upstreamClient?: (server: RunningServer) => Partial<Record<keyof UpstreamClient, unknown>>;
}

/** Our server, an upstream provider, a connection of `tenant` and an app of it (see above). */
export async function startFederationRig(options: RigOptions = {}): Promise<FederationRig> {
  const tenant = options.tenant ?? 'acme';
  // The provider needs our callback URL before our server starts: a placeholder client, replaced below.
  const server = await startServer({
    accounts: options.accountStore ?? testAccounts(options.accounts ?? []),
    ...options.server,
  });
  const callback = `${server.oauthUrl}/federation/callback`;
  const registration: Record<string, unknown> = {
    client_id: UPSTREAM_CLIENT.id, client_secret: UPSTREAM_CLIENT.secret, redirect_uris: [callback],
    // Our one post-logout URI (the provider's sign-out after ours comes back there).
    post_logout_redirect_uris: [`${server.baseUrl}/`, `${server.oauthUrl}/federation/signed-out`], token_endpoint_auth_method: 'client_secret_basic',
    ...options.upstreamClient?.(server),
  };
  for (const [field, value] of Object.entries(registration)) if (value === undefined) delete registration[field];
  const upstream = await startUpstreamProvider({
    clients: [registration as UpstreamClient],
    users: options.users ?? [],
    ...(options.strength ? { strength: options.strength } : {}),
  });
  const connection = await server.auth.connections.create({
    tenant, name: 'Acme Login', issuer: upstream.issuer, clientId: UPSTREAM_CLIENT.id, clientSecret: UPSTREAM_CLIENT.secret,
    domains: options.domains ?? ['acme.example'], ...options.connection,
  });
  const appTenant = options.appTenant === null ? undefined : (options.appTenant ?? tenant);
  const registered = await server.auth.appRegistrations.create({
    name: 'Federated app', ...(appTenant !== undefined ? { tenant: appTenant } : {}), redirectUris: [APP_REDIRECT], clientType: 'confidential',
  });
  const config = await client.discovery(new URL(server.oauthUrl), registered.clientId, undefined, client.ClientSecretBasic(registered.clientSecret!), {
    execute: [client.allowInsecureRequests],
  });
  return {
    server,
    upstream,
    app: { clientId: registered.clientId, config },
    connection: { id: connection.id, name: connection.name },
    async stop() {
      await upstream.close();
      await server.stop();
    },
  };
}

export interface Started {
  step: Step;
  verifier: string;
  state: string;
  agent: UserAgent;
}

/** The app's authorization request in a fresh browser (extra parameters: login_hint, domain_hint, ...). */
export async function authorize(rig: FederationRig, extra: Record<string, string> = {}, config = rig.app.config): Promise<Started> {
  const agent = new UserAgent(rig.server.baseUrl);
  const { verifier, challenge } = pkcePair();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: APP_REDIRECT, scope: 'openid', state, code_challenge: challenge, code_challenge_method: 'S256', ...extra,
  });
  return { step: await agent.request(url.href), verifier, state, agent };
}

/** Posts one of the login page's federation forms: the email one, or a connection's button. */
export function federate(agent: UserAgent, step: Step, fields: { email: string } | { connection: string }): Promise<Step> {
  const action = /<form method="post" action="([^"]+\/federate)"/.exec(step.html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)?.[1];
  if (!action || !csrf) throw new Error(`no federation form on the page:\n${step.html}`);
  return agent.request(action.replace(/&amp;/g, '&'), { method: 'POST', body: new URLSearchParams({ csrf, ...fields }).toString() });
}

/**
 * From our 303 to the provider: its sign-in as `username`, then its answer at our callback (with
 * the browser's cookies): what our server answers (the consent page, an app redirect, a failure page).
 */
export async function throughUpstream(agent: UserAgent, toProvider: Step, username: string): Promise<Step> {
  if (!toProvider.location) throw new Error(`not sent to the provider (status ${toProvider.status}):\n${toProvider.html}`);
  const { callbackUrl } = await passUpstreamSignIn(toProvider.location, username);
  return agent.request(callbackUrl);
}

/** Consent (Allow) if asked, then the code exchanged by openid-client: the tokens. */
export async function tokensOf(rig: FederationRig, started: Started, step: Step): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  let last = step;
  if (last.html.includes('value="allow"')) last = await started.agent.submit(last, { decision: 'allow' });
  if (!last.location) throw new Error(`no redirect to the app (status ${last.status}):\n${last.html}`);
  return client.authorizationCodeGrant(rig.app.config, new URL(last.location), { pkceCodeVerifier: started.verifier, expectedState: started.state });
}
