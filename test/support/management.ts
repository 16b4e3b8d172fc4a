import { basic, postToken, type RunningServer } from './server.js';
import { signInForCode } from './sign-in.js';

/** A management API answer: its status and its JSON body (`{}` for a 204). */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * An access token for the management API as `user` (who holds integration_setup): a first-party
 * confidential app named "Portal" at `redirectUri` is created on the server, `user` signs in to it
 * over HTTP with the scope `openid manage.integrations`, and its code is exchanged.
 */
export async function managementToken(server: RunningServer, user: { sub: string; password: string }, redirectUri = 'https://portal.example/cb'): Promise<string> {
  const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [redirectUri], clientType: 'confidential', firstParty: true });
  const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri }, user, 'openid manage.integrations');
  const answer = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
  return answer.body.access_token as string;
}

/** `{method} {baseUrl}/api/oauth2/{path}` with `token`, and `body` as JSON when given. */
export async function callManagementApi(server: RunningServer, token: string, path: string, method = 'GET', body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(`${server.baseUrl}/api/oauth2/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (response.status === 204 ? {} : await response.json()) as Record<string, unknown> };
}
