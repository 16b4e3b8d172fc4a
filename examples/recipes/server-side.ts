/**
 * Server-side recipes: registering a client that holds a key instead of a secret, rotating its
 * keys without downtime, and an API that takes DPoP-bound tokens (Koa and Express). The regions
 * are shown in docs/client-recipes.md and run by test/example/client-recipes.test.ts.
 */
import express from 'express';
import Koa from 'koa';
import type { AuthServer, ClientConfigurationInput } from '../../src/index.js';
import { authenticate, createTokenVerifier, expressAuthenticate, type AuthState } from '../../src/resource-server/index.js';

/** One public key of a client, as `jwks` takes it (a JWK with `kid`; never a private member). */
export type PublicJwk = NonNullable<ClientConfigurationInput['jwks']>['keys'][number];

// #region register
/**
 * A payroll provider's integration: its public key (a JWK with a `kid`, never the private key)
 * instead of a secret, and every token bound to its DPoP key. No `clientSecret` comes back.
 */
export async function registerPayrollSync(auth: AuthServer, publicKey: PublicJwk) {
  const { clientId } = await auth.clientConfigurations.create({
    tenant: 'acme',
    name: 'Payroll sync',
    category: 'payroll',
    resources: { scim: { scopes: ['scim.read'] } },
    tokenEndpointAuthMethod: 'private_key_jwt',
    jwks: { keys: [publicKey] },
    dpop: 'required',
  });
  return clientId;
}
// #endregion

// #region rotate
/**
 * Key rotation without downtime, in three steps: 1. register the new key next to the old one;
 * 2. the client signs with the new key (assertions signed with the old one still pass meanwhile);
 * 3. retire the old key. Each update takes effect on every instance at once.
 */
export async function addClientKey(auth: AuthServer, clientId: string, newKey: PublicJwk) {
  const keys = (await auth.clientConfigurations.get(clientId))?.jwks?.keys ?? [];
  return auth.clientConfigurations.update(clientId, { jwks: { keys: [...keys, newKey] } });
}

export async function retireClientKey(auth: AuthServer, clientId: string, kid: string) {
  const keys = (await auth.clientConfigurations.get(clientId))?.jwks?.keys ?? [];
  return auth.clientConfigurations.update(clientId, { jwks: { keys: keys.filter((key) => key.kid !== kid) } });
}
// #endregion

// #region resource-server
/** An API that takes DPoP-bound tokens with their proofs (and Bearer tokens as before). */
export function payslipApis(auth: Pick<AuthServer, 'issuer' | 'audience'>) {
  const verifier = createTokenVerifier({
    issuer: auth.issuer,
    audience: auth.audience,
    jwks: new URL(`${auth.issuer}/jwks`),
    dpop: true,
  });

  const koa = new Koa();
  koa.use(authenticate(verifier));
  koa.use((ctx) => {
    ctx.body = { sub: (ctx.state as AuthState).auth.sub };
  });

  const app = express();
  app.get('/payslips', expressAuthenticate(verifier), (req, res) => {
    res.json({ sub: req.auth?.sub });
  });
  return { koa, express: app };
}
// #endregion
