import { row, type EndpointModule } from '../endpoint.js';
import { firstPartyCheck } from '../consents/index.js';
import { managementHandlers } from './management-api.js';
import { managementApiOperations } from './openapi.js';

type ManagementRoute =
  | 'clientConfigurations' | 'clientConfiguration' | 'clientConfigurationSecret'
  | 'appRegistrations' | 'appRegistration' | 'appRegistrationSecret'
  | 'auditEvents' | 'platformApps' | 'signInUnlock'
  | 'userFactors' | 'userFactorResetRequest' | 'tenantSettings'
  | 'connections' | 'connection';

/**
 * THE MANAGEMENT API: a tenant's client configurations and app registrations, its Activity (the
 * audit trail), the apps that serve it, lifting its users' sign-in holds, and its own settings (the
 * second-factor rule: src/endpoints/management/tenant-settings.ts), its identity providers
 * (connections.ts), for users holding
 * "Create and update integration setup" with a token of a first-party app that carries the
 * management right; and its users' second factors (list, a reset asked for).
 */
export const managementEndpoints: EndpointModule<ManagementRoute> = {
  routes: ({ api }) => {
    const common = { group: 'management_api', store: true } as const;
    const collection = <List extends string, One extends string, Secret extends string>(path: string, list: List, one: One, secret: Secret) => [
      row({ ...common, name: list, path: `${api}/${path}`, methods: ['GET', 'POST'], documented: ['GET', 'POST'] }),
      row({ ...common, name: one, path: `${api}/${path}/{clientId}`, methods: ['GET', 'PATCH', 'DELETE'], documented: ['GET', 'PATCH', 'DELETE'] }),
      row({ ...common, name: secret, path: `${api}/${path}/{clientId}/secret`, methods: ['POST'], documented: ['POST'] }),
    ];
    return [
      ...collection('client-configurations', 'clientConfigurations', 'clientConfiguration', 'clientConfigurationSecret'),
      ...collection('app-registrations', 'appRegistrations', 'appRegistration', 'appRegistrationSecret'),
      row({ ...common, name: 'auditEvents', path: `${api}/audit-events`, methods: ['GET'], documented: ['GET'] }),
      row({ ...common, name: 'platformApps', path: `${api}/platform-apps`, methods: ['GET'], documented: ['GET'] }),
      row({ ...common, name: 'signInUnlock', path: `${api}/sign-ins/unlock`, methods: ['POST'], documented: ['POST'] }),
      row({ ...common, name: 'userFactors', path: `${api}/users/{sub}/factors`, methods: ['GET'], documented: ['GET'] }),
      row({ ...common, name: 'userFactorResetRequest', path: `${api}/users/{sub}/factors/reset-request`, methods: ['POST'], documented: ['POST'] }),
      row({ ...common, name: 'tenantSettings', path: `${api}/tenant-settings`, methods: ['GET', 'PUT'], documented: ['GET', 'PUT'] }),
      // The tenant's identity providers (enterprise sign-in: connections.ts).
      row({ ...common, name: 'connections', path: `${api}/connections`, methods: ['GET', 'POST'], documented: ['GET', 'POST'] }),
      row({ ...common, name: 'connection', path: `${api}/connections/{id}`, methods: ['GET', 'PATCH', 'DELETE'], documented: ['GET', 'PATCH', 'DELETE'] }),
    ];
  },
  operations: managementApiOperations,
  audits: [
    'management.denied',
    'client_configuration.created', 'client_configuration.updated', 'client_configuration.secret_rotated', 'client_configuration.deleted',
    'app_registration.created', 'app_registration.updated', 'app_registration.secret_rotated', 'app_registration.deleted',
    'consent.revoked', 'sign_in.unlocked', 'factor.reset', 'tenant_settings.updated',
    'connection.created', 'connection.updated', 'connection.deleted',
  ],
  handlers: (parts) => managementHandlers({
    audit: parts.audit,
    addressOf: parts.apiAddressOf,
    bodyLimit: parts.settings.limits.apiRequestBytes,
    verifier: parts.engine.ownApis,
    accounts: parts.settings.accounts,
    clients: parts.clients,
    apps: parts.apps,
    isFirstParty: firstPartyCheck(parts),
    holds: parts.holds,
    tenantPolicy: parts.settings.tenantPolicy,
    factors: parts.factors,
    tenantSettings: parts.tenantSettings,
    secondFactorRules: parts.secondFactorRules,
    connections: parts.connections,
  }),
};
