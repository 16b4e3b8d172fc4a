import { row, type EndpointModule } from '../endpoint.js';
import { consentHandlers } from './consent-api.js';
import { consentApiOperations } from './openapi.js';

/** The first-party apps: their users' tokens see and revoke all of their consents. */
export function firstPartyCheck(parts: { apps: { get(clientId: string): Promise<{ firstParty?: boolean } | undefined> } }) {
  return async (clientId: string): Promise<boolean> => (await parts.apps.get(clientId))?.firstParty === true;
}

/** THE CONSENT API: a user lists and revokes what she allowed apps, within her tenant. */
export const consentEndpoints: EndpointModule<'consents' | 'consent'> = {
  routes: ({ api }) => [
    row({ name: 'consents', path: `${api}/consents`, methods: ['GET'], group: 'consent_api', store: true, documented: ['GET'] }),
    row({ name: 'consent', path: `${api}/consents/{clientId}`, methods: ['DELETE'], group: 'consent_api', store: true, documented: ['DELETE'] }),
  ],
  operations: consentApiOperations,
  audits: ['consent.revoked'],
  handlers: (parts) => consentHandlers(parts.engine.ownApis, parts.consents, parts.settings.accounts, firstPartyCheck(parts), parts.apiAddressOf),
};
