import { tenantSettingsOperation } from './tenant-settings.js';
import { connectionOperations } from './connections.js';
import { authFailures, clientIdParameter, json, NO_STORE, ref, response, type Json } from '../../http/openapi-parts.js';

/** The Activity of the caller's tenant: its audit events. */
function auditEventsOperation(): Json {
  const query = (name: string, schema: Json, description: string) => ({ name, in: 'query', required: false, schema, description });
  return {
    get: {
      operationId: 'listAuditEvents',
      tags: ['audit'],
      summary: "The audit trail of the caller's tenant, newest first",
      description:
        'Who did what to which client configuration, app, consent or session in the caller\'s tenant (never another '
        + 'tenant\'s: there is no parameter to choose one). The same rights as the rest of the management API. A page '
        + 'with `next` may have more: pass it as `cursor`. An unknown parameter, or one sent twice, is 400.',
      security: [{ bearerAuth: [] }],
      parameters: [
        query('type', { type: 'string' }, 'Only events of this type, e.g. `client_configuration.secret_rotated`.'),
        query('since', { type: 'string', format: 'date-time' }, 'Events at or after this time.'),
        query('until', { type: 'string', format: 'date-time' }, 'Events at or before this time.'),
        query('limit', { type: 'integer', minimum: 1, maximum: 200 }, 'At most this many; default 50.'),
        query('cursor', { type: 'string' }, 'The `next` of the page before.'),
      ],
      responses: {
        200: { description: 'A page of events.', headers: NO_STORE, content: json(ref('AuditEventList')) },
        400: response('ManagementBadRequest'),
        ...authFailures,
      },
    },
  };
}

/** The apps that serve the caller's tenant besides its own (read-only). */
function platformAppsOperation(): Json {
  return {
    get: {
      operationId: 'listPlatformApps',
      tags: ['app-registrations'],
      summary: "The apps the caller's tenant's users may authorize besides its own",
      description:
        'The operator\'s apps (they serve every tenant) and other tenants\' apps the operator opened to all tenants, less '
        + 'those the tenant\'s policy does not allow: exactly the apps other than its own that the authorization endpoint '
        + 'lets the tenant\'s users authorize. Read-only: no secret, and the management API changes none of them. The same '
        + 'rights as the rest of the management API.',
      security: [{ bearerAuth: [] }],
      responses: {
        200: { description: 'The apps.', headers: NO_STORE, content: json(ref('PlatformAppList')) },
        ...authFailures,
      },
    },
  };
}

/** A user of the caller's tenant let in again after failed sign-ins. */
function signInUnlockOperation(): Json {
  return {
    post: {
      operationId: 'unlockSignIn',
      tags: ['sign-ins'],
      summary: "Lifts the sign-in hold of a user of the caller's tenant",
      description:
        'Clears the failed sign-ins counted for the username (sign-in throttling), so that the user can sign in from a new '
        + 'browser at once. The hold of an address is not lifted. Recorded as `sign_in.unlocked` with the user as target '
        + '(never the username). A username unknown or of another tenant is answered `{ "unlocked": false }`, like a user '
        + 'who is not held. Needs the host\'s AccountStore to look users up by username (`findByUsername`): without it, '
        + '501 `not_supported`. The same rights as the rest of the management API.',
      security: [{ bearerAuth: [] }],
      requestBody: { required: true, content: json(ref('SignInUnlockRequest')) },
      responses: {
        200: { description: 'Done.', headers: NO_STORE, content: json(ref('SignInUnlockResponse')) },
        400: response('ManagementBadRequest'),
        ...authFailures,
        413: response('PayloadTooLarge'),
        415: response('UnsupportedMediaType'),
        501: response('NotSupported'),
      },
    },
  };
}

/** The `sub` path parameter of a user's routes. */
const subParameter = {
  name: 'sub',
  in: 'path',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: "The user's `sub` (percent-encoded): a user of the caller's tenant.",
};

/** What a tenant's admin sees of a user's second factors, and the reset she may ask for. */
function userFactorOperations(): { list: Json; resetRequest: Json } {
  const common = { tags: ['factors'], security: [{ bearerAuth: [] }] };
  const notHers = 'A user of another tenant is answered exactly like one that exists nowhere: 404 `not_found`.';
  return {
    list: {
      parameters: [subParameter],
      get: {
        ...common,
        operationId: 'listUserFactors',
        summary: "The second factors of a user of the caller's tenant",
        description:
          'What she holds (passkeys, authenticator app, recovery codes) and since when; never a secret, code, hash or key. '
          + `${notHers} The same rights as the rest of the management API.`,
        responses: {
          200: { description: 'Her factors.', headers: NO_STORE, content: json(ref('UserFactorList')) },
          400: response('ManagementBadRequest'),
          ...authFailures,
          404: response('NotFound'),
        },
      },
    },
    resetRequest: {
      parameters: [subParameter],
      post: {
        ...common,
        operationId: 'requestUserFactorReset',
        summary: "Asks for a reset of a user's second factors, which she completes at her next sign-in",
        description:
          'Her factors keep working until her next sign-in; there, after the password, she enrols anew and what she held goes '
          + '(a reset asked for by mistake locks nobody out). Recorded as `factor.reset` with `requested: true` and the caller '
          + `as actor. No request body. ${notHers} The same rights as the rest of the management API.`,
        responses: {
          200: { description: 'Asked for, or nothing to reset.', headers: NO_STORE, content: json(ref('FactorResetRequestResponse')) },
          400: response('ManagementBadRequest'),
          ...authFailures,
          404: response('NotFound'),
          409: response('Conflict'),
        },
      },
    },
  };
}

interface RecordKind {
  tag: string;
  plural: string;
  singular: string;
  schema: string;
  id: string;
  /** What creating or patching answers (with the secret when there is one). */
  created: Json;
  patched: Json;
  secretNote: string;
}

function managementOperations(kind: RecordKind): Record<string, Json> {
  const security = [{ bearerAuth: [] }];
  const common = { tags: [kind.tag], security };
  const body = (schema: string) => ({ required: true, content: json(ref(schema)) });
  const id = clientIdParameter(`The ${kind.singular}'s client ID.`);
  const input = {
    400: response('ManagementBadRequest'),
    413: response('PayloadTooLarge'),
    415: response('UnsupportedMediaType'),
  };
  return {
    collection: {
      get: {
        ...common,
        operationId: `list${kind.id}s`,
        summary: `The ${kind.plural} of the caller's tenant`,
        responses: {
          200: { description: `The ${kind.plural}.`, headers: NO_STORE, content: json(ref(`${kind.schema}List`)) },
          ...authFailures,
        },
      },
      post: {
        ...common,
        operationId: `create${kind.id}`,
        summary: `Creates a ${kind.singular} in the caller's tenant`,
        requestBody: body(`${kind.schema}Create`),
        responses: {
          201: { description: `The new ${kind.singular}.`, headers: NO_STORE, content: json(kind.created) },
          ...input,
          ...authFailures,
        },
      },
    },
    item: {
      parameters: [id],
      get: {
        ...common,
        operationId: `get${kind.id}`,
        summary: `One ${kind.singular}`,
        responses: {
          200: { description: `The ${kind.singular}.`, headers: NO_STORE, content: json(ref(kind.schema)) },
          ...authFailures,
          404: response('NotFound'),
        },
      },
      patch: {
        ...common,
        operationId: `update${kind.id}`,
        summary: `Changes a ${kind.singular}`,
        requestBody: body(`${kind.schema}Patch`),
        responses: {
          200: { description: `The changed ${kind.singular}.`, headers: NO_STORE, content: json(kind.patched) },
          ...input,
          ...authFailures,
          404: response('NotFound'),
          409: response('Conflict'),
        },
      },
      delete: {
        ...common,
        operationId: `delete${kind.id}`,
        summary: `Deletes a ${kind.singular}`,
        responses: {
          204: { description: 'Deleted.', headers: NO_STORE },
          ...authFailures,
          404: response('NotFound'),
        },
      },
    },
    secret: {
      parameters: [id],
      post: {
        ...common,
        operationId: `rotate${kind.id}Secret`,
        summary: `A new secret for a ${kind.singular}`,
        description: kind.secretNote,
        responses: {
          200: { description: 'The new secret, shown once.', headers: NO_STORE, content: json(ref('NewSecret')) },
          400: response('ManagementBadRequest'),
          ...authFailures,
          404: response('NotFound'),
          409: response('Conflict'),
        },
      },
    },
  };
}


/** The management API's operations of the OpenAPI document. */
export function managementApiOperations(): Record<'clientConfigurations' | 'clientConfiguration' | 'clientConfigurationSecret' | 'appRegistrations' | 'appRegistration' | 'appRegistrationSecret' | 'auditEvents' | 'platformApps' | 'signInUnlock' | 'userFactors' | 'userFactorResetRequest' | 'tenantSettings' | 'connections' | 'connection', Json> {
  const clients = managementOperations({
    tag: 'client-configurations',
    plural: 'client configurations',
    singular: 'client configuration',
    schema: 'ClientConfiguration',
    id: 'ClientConfiguration',
    created: ref('ClientConfigurationCreated'),
    patched: ref('ClientConfiguration'),
    secretNote: 'The previous secret stops working at once, on every instance. A private_key_jwt client has no secret '
      + '(400, `field: token_endpoint_auth_method`): it rotates its keys with `jwks` or at its `jwks_uri`.',
  });
  const apps = managementOperations({
    tag: 'app-registrations',
    plural: 'app registrations',
    singular: 'app registration',
    schema: 'AppRegistration',
    id: 'AppRegistration',
    created: ref('AppRegistration'),
    patched: ref('AppRegistration'),
    secretNote: 'Confidential client_secret_basic apps only: a public app has no secret (400, `field: client_type`), nor a '
      + 'private_key_jwt app (400, `field: token_endpoint_auth_method`).',
  });
  return {
    clientConfigurations: clients.collection!,
    clientConfiguration: clients.item!,
    clientConfigurationSecret: clients.secret!,
    appRegistrations: apps.collection!,
    appRegistration: apps.item!,
    appRegistrationSecret: apps.secret!,
    auditEvents: auditEventsOperation(),
    platformApps: platformAppsOperation(),
    signInUnlock: signInUnlockOperation(),
    userFactors: userFactorOperations().list,
    userFactorResetRequest: userFactorOperations().resetRequest,
    tenantSettings: tenantSettingsOperation(),
    connections: connectionOperations().list,
    connection: connectionOperations().one,
  };
}
