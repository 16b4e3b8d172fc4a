import type { Context } from 'koa';
import { checkClientAuthentication, type ClientAuthentication } from '../../../policies/client-authentication.js';
import { InvalidClient } from '../../../policies/errors.js';
import { refuseNonConforming } from '../../../policies/high-security.js';
import type { EngineClient } from '../../engine/client-cache.js';
import { secretMatches } from '../../records/secrets.js';
import type { FormParams } from '../../http/request-body.js';
import { basicCredentialsOf } from '../../http/oauth-request.js';
import type { ClientAssertionCheck } from './client-assertion.js';

/** A secret no client has: compared with when the client is unknown, so that both take the same time. */
const NO_CLIENT_DIGEST = 'A'.repeat(43);

/**
 * The client calling revocation or introspection, authenticated as at the token endpoint
 * (policies/client-authentication.ts): HTTP Basic with its secret (compared with the stored
 * digest in constant time), a private_key_jwt client by its assertion (`assertions`:
 * client-assertion.ts), or, where `rule` allows it, a public app by its `client_id` alone.
 * @throws InvalidClient (401) for anything else: an unknown client, a wrong secret, a secret in the
 *   body, a public app with Basic or a confidential one without it.
 */
export async function callingClient(
  ctx: Context,
  params: FormParams,
  rule: ClientAuthentication,
  findClient: (clientId: string) => Promise<EngineClient | undefined>,
  assertions?: { check: ClientAssertionCheck; endpointUrl: string },
): Promise<EngineClient> {
  const credentials = checkClientAuthentication(rule, () => basicCredentialsOf(ctx), params);
  if (credentials && 'clientAssertion' in credentials) {
    // Without a check to run (none given), an assertion is never taken on trust.
    if (!assertions) throw new InvalidClient('client assertions are not accepted here');
    const client = await assertions.check(credentials.clientAssertion, assertions.endpointUrl, findClient);
    const bodyClientId = params.get('client_id');
    if (bodyClientId !== undefined && bodyClientId !== client.clientId) throw new InvalidClient();
    return client;
  }
  if (credentials) {
    const client = await findClient(credentials.clientId);
    const digest = typeof client?.clientSecret === 'string' ? client.clientSecret : NO_CLIENT_DIGEST;
    if (!secretMatches(credentials.clientSecret, digest) || !client || client.clientAuthMethod === 'none') throw new InvalidClient();
    // Authenticated, but not as the high-security profile requires (its tenant selected the
    // profile after the client was registered): refused here as at the token endpoint.
    refuseNonConforming(client);
    return client;
  }
  const client = await findClient(params.get('client_id')!);
  if (!client || client.clientAuthMethod !== 'none') throw new InvalidClient();
  refuseNonConforming(client);
  return client;
}

/** The tenant a client belongs to (its metadata); undefined for the operator's apps. */
export function tenantOfClient(client: EngineClient): string | undefined {
  const { tenant } = client as unknown as { tenant?: unknown };
  return typeof tenant === 'string' ? tenant : undefined;
}
