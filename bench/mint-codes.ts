/**
 * Authorization codes for the named-user benchmark, minted through node-oidc-provider's own models
 * (Grant, AuthorizationCode), as its authorization endpoint does after sign-in and consent, but
 * without the browser round trips: what is measured is the token endpoint. Ours and the bare
 * engine mint with this same function, so both sides exchange codes of the same shape.
 */
import { createHash, randomBytes } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { MintedCode } from './protocol.js';

export interface CodeRequest {
  clientId: string;
  redirectUri: string;
  /** Scopes of the authorization request, as consented: OIDC scopes and API scopes. */
  scope: string;
  /** The grant's OIDC scopes: by default `scope` whole, as our consent page records it. */
  oidcScope?: string;
  /**
   * The one resource (access-token audience) of the code, and the scopes of `scope` that the
   * grant holds for it. Without it, the code names no resource and the grant holds no resource
   * scope: the bare engine then issues an opaque access token without audience.
   */
  resource?: { audience: string; scope: string };
  /** Users the codes are spread over (one grant per code). */
  accountIds: readonly string[];
}

/** The identity scopes an app of the benchmark asks for, besides the API scope. */
export const NAMED_USER_SCOPE = 'openid profile email scim.read';
export const NAMED_USER_RESOURCE_SCOPE = 'scim.read';
/** The OIDC scopes of NAMED_USER_SCOPE: what the bare engine's grant holds for its userinfo tokens. */
export const IDENTITY_SCOPE = 'openid profile email';
/** Users of the benchmark's tenant. */
export const BENCH_USERS = Array.from({ length: 1000 }, (_, index) => `bench-user-${index}`);

/**
 * The codes of the named-user workloads: NAMED_USER_SCOPE for `app`, spread over BENCH_USERS, with
 * its API scope at `audience`; without an audience, a grant of the identity scopes alone.
 */
export function namedUserCodeRequest(app: { clientId: string; redirectUri: string }, audience?: string): CodeRequest {
  const common = { clientId: app.clientId, redirectUri: app.redirectUri, scope: NAMED_USER_SCOPE, accountIds: BENCH_USERS };
  return audience ? { ...common, resource: { audience, scope: NAMED_USER_RESOURCE_SCOPE } } : { ...common, oidcScope: IDENTITY_SCOPE };
}

type CodeProperties = ConstructorParameters<Provider['AuthorizationCode']>[0];

const MINT_CONCURRENCY = 64;

async function mintOne(provider: Provider, client: NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>, request: CodeRequest, accountId: string): Promise<MintedCode> {
  // As the consent page records it: every requested scope as OIDC scope, the API scope also at the resource.
  const grant = new provider.Grant({ accountId, clientId: request.clientId });
  grant.addOIDCScope(request.oidcScope ?? request.scope);
  if (request.resource) grant.addResourceScope(request.resource.audience, request.resource.scope);
  const grantId = await grant.save();
  const verifier = randomBytes(32).toString('base64url');
  // The properties the engine's code response type handler gives a code (no session binding:
  // both servers configure expiresWithSession to false, no claims parameter, no nonce).
  const code = new provider.AuthorizationCode({
    accountId,
    authTime: Math.floor(Date.now() / 1000),
    client,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    codeChallengeMethod: 'S256',
    grantId,
    redirectUri: request.redirectUri,
    ...(request.resource ? { resource: request.resource.audience } : {}),
    scope: request.scope,
    sessionUid: randomBytes(16).toString('base64url'),
  } as CodeProperties);
  return { code: await code.save(), verifier };
}

export async function mintCodes(provider: Provider, request: CodeRequest, count: number): Promise<MintedCode[]> {
  const client = await provider.Client.find(request.clientId);
  if (!client) throw new Error(`client ${request.clientId} not found`);
  const codes: MintedCode[] = [];
  for (let start = 0; start < count; start += MINT_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(MINT_CONCURRENCY, count - start) }, (_, offset) =>
      mintOne(provider, client, request, request.accountIds[(start + offset) % request.accountIds.length]!),
    );
    codes.push(...(await Promise.all(batch)));
  }
  return codes;
}
