import type { Context } from 'koa';
import type { ApiCatalog, ApiDefinition } from '../../policies/catalog.js';
import type { AccountStore } from '../accounts.js';
import type { Factors } from '../factors/index.js';
import type { Passkeys } from '../factors/passkeys.js';
import type { Localizer } from '../i18n/localizer.js';
import type { Logger } from '../logger.js';
import type { Brands } from '../pages/branding.js';
import type { AppRegistrations } from '../records/app-registrations.js';
import type { ForwardedAddress } from './address.js';
import type { PortalSessions } from './sessions.js';
import type { PortalTextOverrides } from './text.js';

/** What the portal needs of the server. */
export interface PortalSetup {
  /** `{baseUrl}`: the public origin and base path. */
  baseUrl: string;
  pathPrefix: string;
  /** The portal's path under the prefix, e.g. `/portal`. */
  path: string;
  /** Where this server reaches its own token endpoint and APIs (`{internalUrl or baseUrl}{pathPrefix}`). */
  internalBase: string;
  issuer: string;
  apis: readonly ApiDefinition[];
  /** What a scope allows, in words, per language. */
  catalog: ApiCatalog;
  /** The source address of a request (the server's rule: proxies trusted or not). */
  addressOf: (ctx: Context) => string;
  /** Signs the user's address for the APIs (their audit trail). */
  forwardedAddress: ForwardedAddress;
  /** The tenants' branding (the `branding` option). */
  brands: Brands;
  /** The sign-in pages' texts (OIDC scope words, in the host's words where it gave some). */
  localizer: Localizer;
  /** The host's portal texts (`portal.messages`). */
  messages?: Record<string, PortalTextOverrides> | undefined;
  apps: AppRegistrations;
  /** The host's users: the Activity names the users of the organisation who acted. */
  accounts?: AccountStore | undefined;
  /** Whether a tenant's admin can lift sign-in holds (the AccountStore has `findByUsername`). */
  canUnlock: boolean;
  sessions: PortalSessions;
  /** The users' second factors: each user manages her own on the Security page. */
  factors: Factors;
  /** The users' passkeys (registration from the Security page). */
  passkeys: Passkeys;
  logger: Logger;
}

/** The portal's own app: its client ID and secret (src/portal/own-app.ts). */
export interface PortalClient {
  clientId: string;
  clientSecret: string;
}
