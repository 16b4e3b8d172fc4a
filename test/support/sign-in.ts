import type { RunningServer } from './server.js';
import { passSecondFactor } from './second-factor.js';
import { pkcePair, UserAgent, type Step } from './user-agent.js';

export interface SignedIn {
  code: string;
  state: string | null;
  verifier: string;
  agent: UserAgent;
}

/**
 * Runs authorize → login → (second factor: enrolment at the first sign-in of a user who must have
 * one, a code after: test/support/second-factor.ts) → consent (Allow) as the given user over HTTP
 * and returns the code that came back to the app, with the PKCE verifier used.
 */
export async function signInForCode(
  server: RunningServer,
  app: { clientId: string; redirectUri: string },
  user: { sub: string; password: string },
  scope = 'openid scim.read',
  agent = new UserAgent(server.baseUrl),
): Promise<SignedIn> {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code', client_id: app.clientId, redirect_uri: app.redirectUri, scope, state: 's',
    code_challenge: challenge, code_challenge_method: 'S256',
  });
  let step: Step = await agent.request(`${server.oauthUrl}/authorize?${query}`);
  if (step.html.includes('name="password"')) {
    step = await agent.submit(step, { username: user.sub, password: user.password });
    step = await passSecondFactor(agent, step, server.baseUrl, user.sub);
  }
  if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
  if (!step.location) throw new Error(`no redirect back to the app (status ${step.status})`);
  const back = new URL(step.location);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${step.location}`);
  return { code, state: back.searchParams.get('state'), verifier, agent };
}
