/**
 * Before any load: one real request of each workload must answer 200 with tokens signed as
 * expected, so that a misconfigured side cannot pass for a fast one.
 */
import type { Algorithm, ServerTarget } from './protocol.js';
import type { ServerProcess } from './server-process.js';
import { basicHeaders, CLIENT_CREDENTIALS_BODY, codeExchangeBody, refreshBody } from './workloads.js';

type TokenResponse = Record<string, unknown>;

function jwtHeaderAlg(token: unknown): unknown {
  if (typeof token !== 'string') return undefined;
  try {
    return (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: unknown }).alg;
  } catch {
    return undefined;
  }
}

async function tokenRequest(target: ServerTarget, credentials: ServerTarget['service'], body: string): Promise<TokenResponse> {
  const response = await fetch(target.tokenUrl, { method: 'POST', headers: basicHeaders(credentials), body });
  const text = await response.text();
  let parsed: TokenResponse = {};
  try {
    parsed = JSON.parse(text) as TokenResponse;
  } catch {
    // reported below with the raw text
  }
  if (response.status !== 200 || typeof parsed.access_token !== 'string') {
    throw new Error(`token request to ${target.tokenUrl} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return parsed;
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
