import type { Context } from 'koa';
import { checkClientAuthentication, type ClientAuthentication } from '../../../policies/client-authentication.js';
import { InvalidClient } from '../../../policies/errors.js';
import type { EngineClient } from '../../engine/client-cache.js';
import { secretMatches } from '../../records/secrets.js';
import type { FormParams } from '../../http/request-body.js';
import { basicCredentialsOf } from '../../http/oauth-request.js';

/** A secret no client has: compared with when the client is unknown, so that both take the same time. */
const NO_CLIENT_DIGEST = 'A'.repeat(43);

/**
 * The client calling revocation or introspection, authenticated as at the token endpoint
 * (policies/client-authentication.ts): HTTP Basic with its secret (compared with the stored
 * digest in constant time), or, where `rule` allows it, a public app by its `client_id` alone. A
 * client assertion (private_key_jwt) is refused here for now.
 * @throws InvalidClient (401) for anything else: an unknown client, a wrong secret, a secret in the
 *   body, a public app with Basic or a confidential one without it.
 */
export async function callingClient(
  ctx: Context,
  params: FormParams,
  rule: ClientAuthentication,
  findClient: (clientId: string) => Promise<EngineClient | undefined>,
): Promise<EngineClient> {
  const credentials = checkClientAuthentication(rule, () => basicCredentialsOf(ctx), params);
  // A private_key_jwt client's assertion is checked by the engine at the token endpoint only, so
  // far: here it is refused like any authentication we cannot check (never taken on trust).
  if (credentials && 'clientAssertion' in credentials) throw new InvalidClient('client assertions are accepted at the token endpoint only');
  if (credentials) {
    const client = await findClient(credentials.clientId);
    const digest = typeof client?.clientSecret === 'string' ? client.clientSecret : NO_CLIENT_DIGEST;
    if (!secretMatches(credentials.clientSecret, digest) || !client || client.clientAuthMethod === 'none') throw new InvalidClient();
    return client;
  }
  const client = await findClient(params.get('client_id')!);
  if (!client || client.clientAuthMethod !== 'none') throw new InvalidClient();
  return client;
}

/** The tenant a client belongs to (its metadata); undefined for the operator's apps. */
export function tenantOfClient(client: EngineClient): string | undefined {
  const { tenant } = client as unknown as { tenant?: unknown };
  return typeof tenant === 'string' ? tenant : undefined;
}
