/**
 * Before any load: one real request of each workload must answer 200 with tokens signed as
 * expected, so that a misconfigured side cannot pass for a fast one.
 */
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import type { ClientSigner } from './client-signing.js';
import type { Algorithm, IdTokenAlgorithm, ServerTarget } from './protocol.js';
import type { ServerProcess } from './server-process.js';
import {
  answers,
  basicHeaders,
  bearerHeaders,
  CLIENT_AUTH_WORKLOADS,
  clientAuthRequest,
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

function expectAlg(what: string, token: unknown, alg: Algorithm | IdTokenAlgorithm, url: string): void {
  const signedWith = jwtHeaderAlg(token);
  if (signedWith !== alg) throw new Error(`${what} from ${url} is signed with ${String(signedWith)}, not ${alg}`);
}

export async function checkClientCredentials(target: ServerTarget, alg: Algorithm): Promise<void> {
  const body = await tokenRequest(target, target.service, CLIENT_CREDENTIALS_BODY);
  expectAlg('client_credentials access token', body.access_token, alg, target.tokenUrl);
}

/**
 * For the app of each ID-token algorithm: code exchange, an ES256 access token, an ID token signed
 * with the app's algorithm, a refresh token; refresh: a new one (rotation), and an ID token signed alike.
 */
export async function checkNamedUser(server: ServerProcess, idTokenAlgorithms: readonly IdTokenAlgorithm[]): Promise<void> {
  const { target } = server;
  for (const idTokenAlg of idTokenAlgorithms) {
    const app = target.apps[idTokenAlg];
    const [code] = await server.mint(1, 'exchange', idTokenAlg);
    if (!code) throw new Error('the server minted no code');
    const exchanged = await tokenRequest(target, app, codeExchangeBody(target, code, app));
    expectAlg('code exchange access token', exchanged.access_token, 'ES256', target.tokenUrl);
    expectAlg(`ID token of the ${idTokenAlg} app`, exchanged.id_token, idTokenAlg, target.tokenUrl);
    if (typeof exchanged.refresh_token !== 'string') throw new Error(`no refresh token from the code exchange at ${target.tokenUrl}`);
    const refreshed = await tokenRequest(target, app, refreshBody(exchanged.refresh_token));
    expectAlg('refreshed access token', refreshed.access_token, 'ES256', target.tokenUrl);
    expectAlg(`refreshed ID token of the ${idTokenAlg} app`, refreshed.id_token, idTokenAlg, target.tokenUrl);
    if (typeof refreshed.refresh_token !== 'string' || refreshed.refresh_token === exchanged.refresh_token) {
      throw new Error(`the refresh token was not rotated at ${target.tokenUrl}`);
    }
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

/**
 * Each client-authentication workload: a fresh request answers 200 with an access token signed
 * with `alg`, of type DPoP and bound to the client key (`cnf.jkt`) when a proof went with it, of
 * type Bearer without `cnf` otherwise; the same request sent again (its assertion and proof
 * replayed) is refused, so that a side that skipped the replay checks could not pass for a fast one.
 */
export async function checkClientAuth(target: ServerTarget, alg: Algorithm, signer: ClientSigner): Promise<void> {
  let nonce: string | undefined;
  for (const workload of CLIENT_AUTH_WORKLOADS) {
    const request = clientAuthRequest(workload, target, signer, nonce);
    const send = () => fetch(target.tokenUrl, { method: 'POST', ...request });
    const response = await send();
    const text = await response.text();
    nonce = response.headers.get('dpop-nonce') ?? nonce;
    if (response.status !== 200 || !hasAccessToken(text)) throw new Error(`${workload} at ${target.tokenUrl} answered ${response.status}: ${text.slice(0, 500)}`);
    const body = JSON.parse(text) as TokenResponse;
    expectAlg(`${workload} access token`, body.access_token, alg, target.tokenUrl);
    const bound = workload !== 'client-credentials-pkjwt';
    const { cnf } = decodeJwt(String(body.access_token)) as { cnf?: { jkt?: unknown } };
    const proof = request.headers.dpop;
    const jkt = proof ? await calculateJwkThumbprint(decodeProtectedHeader(proof).jwk as JWK) : undefined;
    if (String(body.token_type).toLowerCase() !== (bound ? 'dpop' : 'bearer') || (bound ? cnf?.jkt !== jkt : cnf !== undefined)) {
      throw new Error(`${workload} at ${target.tokenUrl}: token_type ${String(body.token_type)}, cnf ${JSON.stringify(cnf)}`);
    }
    const replayed = await send();
    await replayed.text();
    if (replayed.ok) throw new Error(`${workload} at ${target.tokenUrl}: the replayed assertion or proof was accepted`);
  }
}
