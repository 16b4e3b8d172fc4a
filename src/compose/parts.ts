import type Koa from 'koa';
import { SignedOutUsers } from '../records/signed-out-users.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { AuditTrail } from '../audit/trail.js';
import type { ServerParts } from '../endpoints/endpoint.js';
import { engineAppCheck } from '../engine/client-directory.js';
import type { KeyPurposes, SigningAlgorithm } from '../engine/keys.js';
import { startSigningKeys, type SigningKeys } from './signing-keys.js';
import { clientAddress } from '../http/client-address.js';
import { Localizer } from '../i18n/localizer.js';
import { SignInHolds } from '../limits/sign-in.js';
import { createLogger } from '../logger.js';
import { Metrics } from '../observability/metrics.js';
import { startTracing } from '../observability/tracing.js';
import type { ResolvedOptions } from '../options.js';
import { Brands } from '../pages/branding.js';
import { ForwardedAddress, PORTAL_ADDRESS_HEADER } from '../portal/address.js';
import { AppRegistrations } from '../records/app-registrations.js';
import { ClientConfigurations } from '../records/client-configurations.js';
import { Consents } from '../records/consents.js';
import type { SecurityProfile } from '../../policies/high-security.js';
import { nonConformingClients } from '../records/security-profiles.js';
import { startEngine, type StartedEngine } from './engine.js';
import { OwnRecords } from './own-records.js';
import { cookieKeysOf, factorKeysOf, openStore } from './store.js';
import { tracedStore } from './traced-store.js';
import { Factors } from '../factors/index.js';
import { Passkeys } from '../factors/passkeys.js';
import { SecondFactorRules, TenantSettings } from '../records/tenant-settings.js';
import { Connections } from '../federation/connections.js';
import { Upstreams } from '../federation/upstreams.js';
import { SignedInThroughStore } from '../federation/signed-in-through.js';
import { Sealer } from '../records/sealed.js';
import { importJWK } from 'jose';
import type { PrivateKey } from 'openid-client';

/** The parts of a server (what its endpoints are built from), and what the rest of the composition needs. */
export interface AssembledServer {
  options: ResolvedOptions;
  parts: ServerParts;
  engine: StartedEngine;
  /** What the server writes for itself, written again should the store be emptied. */
  ownRecords: OwnRecords;
  /** The portal's signature on the browser's address it tells our APIs. */
  forwardedAddress: ForwardedAddress;
  /** The signing keys (followed in the store while the server runs, when kept there). */
  signing: SigningKeys;
}

/**
 * Opens the store, loads or makes the signing keys, starts the audit trail, the records and the
 * engine: the parts every endpoint is built from.
 */
export async function assembleServer(options: ResolvedOptions): Promise<AssembledServer> {
  const logger = options.logger ?? createLogger();
  const metrics = options.observability.metrics ? new Metrics() : undefined;
  const catalog = new ApiCatalog(options.apis);
  // A key for the access tokens, and one for each algorithm apps may register for their ID
  // tokens (RS256, OIDC's default, always among them): generated alike, or required of keys.jwks.
  const { algorithms, purposes } = signingNeeds(options);
  // Spans when the host installed @opentelemetry/api (src/observability/tracing.ts); the store's calls among them.
  const tracing = await startTracing(options.observability.tracing, () => logger.warn('observability.tracing is on but @opentelemetry/api is not installed: no spans are made'));
  const store = tracedStore(await openStore(options, logger, metrics), tracing);
  const ownRecords = new OwnRecords(store, logger, () => metrics?.storeEmptied.inc());
  const signing = await startSigningKeys(options, store, ownRecords, algorithms, purposes, logger).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const keys = signing.keys;
  const audit = new AuditTrail(store, options.audit, logger, options.onAuditEvent);
  const consents = new Consents(store, catalog, audit);
  const cookieKeys = cookieKeysOf(options, logger);
  // The pages' languages and the tenants' branding (src/i18n/, src/pages/branding.ts).
  const look = { localizer: new Localizer(options.i18n), brands: new Brands(options.branding, logger) };
  const addressOf = clientAddress(options.proxy ? options.trustedProxyHops : 0);
  // The portal tells our APIs the browser's address (signed): theirs for the audit trail.
  const forwardedAddress = new ForwardedAddress(cookieKeys[cookieKeys.length - 1]!);
  const apiAddressOf = options.portal.enabled
    ? (ctx: Koa.Context) => forwardedAddress.verify(ctx.get(PORTAL_ADDRESS_HEADER) || undefined) ?? addressOf(ctx)
    : addressOf;
  // Each tenant's own settings, and its second-factor rule: the host's policy with them.
  // A tenant's switch to the high-security profile names its clients that do not conform (policies/high-security.ts).
  const tenantSettings = new TenantSettings(store.records, audit, Date.now, (tenant): Promise<string[]> => nonConformingClients(tenant, clients, apps));
  const secondFactorRules = new SecondFactorRules(options.tenantPolicy, tenantSettings);
  // Users the host signed out everywhere: their sessions begun before sign them in no more.
  const signedOutUsers = new SignedOutUsers(store, options.sessionTtl);
  const engine = startEngine({ options, logger, metrics, tracing, store, catalog, audit, consents, cookieKeys, keys, look, addressOf, secondFactorRules, signedOutUsers });
  // The tenants' identity providers (enterprise sign-in, src/federation/): their client secrets
  // sealed under the factor keys (what could sign a user in), our relying party at each.
  const factorKeys = factorKeysOf(options, cookieKeys, logger);
  const connectionSealer = new Sealer(factorKeys, 'connection-secrets');
  const callbackBase = `${options.baseUrl}${options.pathPrefix}/oauth2/federation/callback`;
  const connections = new Connections(store.records, connectionSealer, audit, Date.now, callbackBase);
  const upstreams = new Upstreams({
    timeoutMs: options.federation.timeoutMs,
    metadataCacheSeconds: options.federation.metadataCacheSeconds,
    callbackBase,
    tracing,
    // private_key_jwt at a provider: our RS256 signing key (its public half is at our jwks_uri),
    // the key that signs RS256 now (it changes with a rotation of keys kept in the store).
    signingKey: async () => {
      const jwk = keys.signingJwk('RS256');
      if (!jwk) throw new Error('private_key_jwt at an identity provider needs an RS256 key of the server\'s own: RS256 is signed by an external signer');
      return { key: (await importJWK(jwk, 'RS256')) as PrivateKey['key'], kid: jwk.kid! };
    },
  });
  connections.onChange((id) => upstreams.forget(id));
  const tenantProfile = (tenant: string): Promise<SecurityProfile> => secondFactorRules.profile(tenant);
  const apps: AppRegistrations = new AppRegistrations(store.records, engineAppCheck(engine.provider, keys.algorithms), (clientId, by, reason) => consents.endAllOf(clientId, by, reason), audit, tenantProfile);
  const clients: ClientConfigurations = new ClientConfigurations(store.records, catalog, audit, tenantProfile);
  const parts: ServerParts = {
    settings: options,
    logger,
    metrics,
    tracing,
    store,
    audit,
    catalog,
    cookieKeys,
    look,
    addressOf,
    apiAddressOf,
    clients,
    apps,
    consents,
    holds: new SignInHolds(store.counters, cookieKeys, options.accounts, audit),
    // Authenticator apps show the issuer's host name beside the account.
    factors: new Factors(store.records, {
      keys: factorKeys,
      issuerName: new URL(options.issuer).host,
      host: options.accounts?.secondFactor,
    }, audit),
    // The relying party is the public base URL's host, never a request's Host header.
    passkeys: new Passkeys(store, { baseUrl: options.baseUrl, rpName: new URL(options.issuer).host }, audit),
    tenantSettings,
    secondFactorRules,
    connections,
    upstreams,
    signedInThrough: new SignedInThroughStore(store, connectionSealer, options.sessionTtl),
    signedOutUsers,
    engine,
  };
  return { options, parts, engine, ownRecords, forwardedAddress, signing };
}

/** The algorithms the server signs with, each with the options that need it (for the start-up error). */
function signingNeeds(options: Pick<ResolvedOptions, 'accessTokenAlgorithm' | 'idTokenAlgorithms'>): { algorithms: SigningAlgorithm[]; purposes: KeyPurposes } {
  const purposes: KeyPurposes = {};
  const need = (alg: SigningAlgorithm, by: string): void => {
    purposes[alg] = purposes[alg] ? `${purposes[alg]} and ${by}` : by;
  };
  need(options.accessTokenAlgorithm, 'accessTokenAlgorithm');
  for (const alg of new Set(options.idTokenAlgorithms)) need(alg, alg === 'RS256' ? 'OpenID Connect\'s default ID tokens' : 'idTokenAlgorithms');
  return { algorithms: Object.keys(purposes) as SigningAlgorithm[], purposes };
}
