/**
 * Before any load: one real request of each workload must answer 200 with tokens signed as
 * expected, so that a misconfigured side cannot pass for a fast one.
 */
import type { Algorithm, ServerTarget } from './protocol.js';
import type { ServerProcess } from './server-process.js';
import {
  answers,
  basicHeaders,
  bearerHeaders,
  CLIENT_CREDENTIALS_BODY,
  codeExchangeBody,
  introspectionBody,
  refreshBody,
} from './workloads.js';

type TokenResponse = Record<string, unknown>;

function jwtHeaderAlg(token: unknown): unknown {
  if (typeof token !== 'string') return undefined;
  try {
    return (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: unknown }).alg;
  } catch {
    return undefined;
  }
}

/** One request that must answer 200 with a body `expected` accepts (else it throws, quoting the body). */
async function expectAnswer(url: string, init: RequestInit, expected: (body: string) => boolean): Promise<string> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (response.status !== 200 || !expected(text)) {
    throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return text;
}

const hasAccessToken = (text: string) => {
  try {
    return typeof (JSON.parse(text) as TokenResponse).access_token === 'string';
  } catch {
    return false;
  }
};

/** A token request that must answer 200 with an access token. */
export async function tokenRequest(target: ServerTarget, credentials: ServerTarget['service'], body: string): Promise<TokenResponse> {
  const text = await expectAnswer(target.tokenUrl, { method: 'POST', headers: basicHeaders(credentials), body }, hasAccessToken);
  return JSON.parse(text) as TokenResponse;
}

function expectAlg(what: string, token: unknown, alg: Algorithm, url: string): void {
  const signedWith = jwtHeaderAlg(token);
  if (signedWith !== alg) throw new Error(`${what} from ${url} is signed with ${String(signedWith)}, not ${alg}`);
}

export async function checkClientCredentials(target: ServerTarget, alg: Algorithm): Promise<void> {
  const body = await tokenRequest(target, target.service, CLIENT_CREDENTIALS_BODY);
  expectAlg('client_credentials access token', body.access_token, alg, target.tokenUrl);
}

/** Code exchange: ES256 access token, RS256 ID token, a refresh token; refresh: a new one (rotation). */
export async function checkNamedUser(server: ServerProcess): Promise<void> {
  const { target } = server;
  const [code] = await server.mint(1);
  if (!code) throw new Error('the server minted no code');
  const exchanged = await tokenRequest(target, target.app, codeExchangeBody(target, code));
  expectAlg('code exchange access token', exchanged.access_token, 'ES256', target.tokenUrl);
  expectAlg('ID token', exchanged.id_token, 'RS256', target.tokenUrl);
  if (typeof exchanged.refresh_token !== 'string') throw new Error(`no refresh token from the code exchange at ${target.tokenUrl}`);
  const refreshed = await tokenRequest(target, target.app, refreshBody(exchanged.refresh_token));
  expectAlg('refreshed access token', refreshed.access_token, 'ES256', target.tokenUrl);
  if (typeof refreshed.refresh_token !== 'string' || refreshed.refresh_token === exchanged.refresh_token) {
    throw new Error(`the refresh token was not rotated at ${target.tokenUrl}`);
  }
}

/** An access token of the userinfo and introspection workloads: 200 and a `sub` at userinfo, active at introspection. */
export async function checkLifecycle(server: ServerProcess): Promise<void> {
  const { target } = server;
  const [code] = await server.mint(1, 'lifecycle');
  if (!code) throw new Error('the server minted no code');
  const { access_token: token } = await tokenRequest(target, target.app, codeExchangeBody(target, code));
  await expectAnswer(target.userinfoUrl, { headers: bearerHeaders(String(token)) }, answers.userinfo);
  await expectAnswer(target.introspectionUrl, { method: 'POST', headers: basicHeaders(target.app), body: introspectionBody(String(token)) }, answers.introspection);
}
