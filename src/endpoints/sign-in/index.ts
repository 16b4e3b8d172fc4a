import { SignInThrottle } from '../../limits/sign-in.js';
import { PasskeyCeremonyLimit } from '../../limits/passkey-ceremonies.js';
import { PASSKEY_SCRIPT_PATH } from '../../pages/passkey-script.js';
import { PasskeySteps } from './passkey-steps.js';
import { ENGINE_ROW, GET, row, type EndpointModule } from '../endpoint.js';
import { authorizeGuard } from './authorize.js';
import { pushedAuthorizationGuard } from './pushed-authorization.js';
import { clientEndpoints } from '../client-endpoints.js';
import { signInOperations } from './openapi.js';
import { interactionHandlers } from './pages.js';
import { FederatedAccounts } from '../../federation/federated-accounts.js';

/**
 * SIGN-IN: the authorization endpoint (the engine's, behind its guard: size and requests per
 * address), and the pages it sends the browser to (login, second factor, consent:
 * src/endpoints/sign-in/pages.ts; passkeys: passkey-steps.ts),
 * with the failed sign-in throttle.
 */
export const signInEndpoints: EndpointModule<'authorize' | 'pushedAuthorization' | 'authorizeResume' | 'interaction' | 'interactionStep'> = {
  routes: ({ oauth }) => [
    // OpenID Connect Core §3.1.2.1: the authorization endpoint takes GET and POST alike.
    row({ name: 'authorize', path: `${oauth}/authorize`, methods: ['GET', 'POST'], group: 'authorize', store: true, ...ENGINE_ROW, documented: ['GET', 'POST'] }),
    // RFC 9126: the authorization request pushed by the app's back end, used by reference at /authorize.
    row({ name: 'pushedAuthorization', path: `${oauth}/par`, methods: ['POST'], group: 'authorize', store: true, ...ENGINE_ROW, documented: ['POST'] }),
    row({ name: 'authorizeResume', path: `${oauth}/authorize/{uid}`, methods: ['GET'], group: 'authorize', store: true, ...ENGINE_ROW }),
    row({ name: 'interaction', path: `${oauth}/interaction/{uid}`, methods: GET, group: 'interaction', store: true, refuse: 'page' }),
    row({ name: 'interactionStep', path: `${oauth}/interaction/{uid}/{step}`, methods: ['POST'], group: 'interaction', store: true, refuse: 'page' }),
  ],
  operations: signInOperations,
  audits: ['sign_in.succeeded', 'sign_in.failed', 'sign_in.second_factor_failed', 'recovery_code.used', 'consent.granted', 'factor.added', 'factor.reset'],
  handlers(parts) {
    const { settings, store, addressOf, logger, metrics, engine, look, cookieKeys } = parts;
    return {
      authorize: authorizeGuard(
        { queryBytes: settings.limits.authorizeQueryBytes, perAddress: settings.rateLimits.authorize },
        store.counters,
        addressOf,
        logger,
        () => metrics?.rateLimited.inc({ limit: 'authorize' }),
      ),
      pushedAuthorization: (() => {
        const guard = pushedAuthorizationGuard(
          { queryBytes: settings.limits.authorizeQueryBytes, perAddress: settings.rateLimits.authorize },
          store.counters,
          addressOf,
          logger,
          () => metrics?.rateLimited.inc({ limit: 'authorize' }),
        );
        // Behind the failed-authentication limit of every endpoint that takes client credentials.
        return clientEndpoints(parts).limited((ctx, _params, next) => guard(ctx, () => engine.serve(ctx, next)));
      })(),
      ...interactionHandlers({
        provider: engine.provider,
        publicOrigin: new URL(settings.baseUrl).origin,
        path: engine.interactionPath,
        accounts: settings.accounts,
        apps: parts.apps,
        consents: parts.consents,
        audience: settings.audience,
        catalog: parts.catalog,
        tenantPolicy: settings.tenantPolicy,
        tenantDisplayName: settings.tenantDisplayName,
        logger,
        formLimit: settings.limits.formRequestBytes,
        addressOf,
        audit: parts.audit,
        brands: look.brands,
        connections: parts.connections,
        factors: parts.factors,
        passkeySteps: new PasskeySteps({
          passkeys: parts.passkeys,
          accounts: settings.accounts,
          limit: new PasskeyCeremonyLimit(store.counters, settings.rateLimits.passkeySignIn, logger, () => metrics?.rateLimited.inc({ limit: 'passkey_sign_in' })),
          path: engine.interactionPath,
          script: `${settings.pathPrefix}${PASSKEY_SCRIPT_PATH}`,
        }),
        rules: parts.secondFactorRules,
        federation: {
          callbackBase: `${settings.baseUrl}${settings.pathPrefix}/oauth2/federation/callback`,
          connections: parts.connections,
          upstreams: parts.upstreams,
          signedInThrough: parts.signedInThrough,
          federatedAccounts: new FederatedAccounts(store.records, settings.accounts, (domain) => parts.connections.byDomain(domain)),
          cookieKeys,
          metrics,
        },
        throttle: new SignInThrottle(store.counters, settings.rateLimits.failedSignIn, cookieKeys, logger, {
          failed: () => metrics?.signInFailures.inc(),
          refused: () => metrics?.rateLimited.inc({ limit: 'sign_in' }),
        }),
      }),
    };
  },
};
