import type Koa from 'koa';
import { PORTAL_SESSION_SECONDS } from '../../policies/lifetimes.js';
import { portalMiddleware, registerPortalApp } from '../portal/index.js';
import { PortalSessions } from '../portal/sessions.js';
import type { PortalTextOverrides } from '../portal/text.js';
import type { AssembledServer } from './parts.js';

/**
 * The administration portal, when the `portal` option turns it on: its own app registered (again
 * should the store be emptied), and its pages.
 */
export async function startPortal({ options, parts, ownRecords, forwardedAddress }: AssembledServer): Promise<Koa.Middleware> {
  const { store, cookieKeys, apps } = parts;
  const portalUrl = `${options.baseUrl}${options.pathPrefix}${options.portal.path}`;
  // The portal's secret comes from the oldest cookie key: a new key is added first, so adding
  // one (the usual rotation) leaves the secret as every running instance has it.
  const portalApp = await ownRecords.add(() => registerPortalApp(apps, options.issuer, portalUrl, cookieKeys[cookieKeys.length - 1]!));
  return portalMiddleware({
    baseUrl: options.baseUrl,
    pathPrefix: options.pathPrefix,
    path: options.portal.path,
    internalBase: `${options.portal.internalUrl ?? options.baseUrl}${options.pathPrefix}`,
    issuer: options.issuer,
    apis: options.apis,
    catalog: parts.catalog,
    brands: parts.look.brands,
    localizer: parts.look.localizer,
    addressOf: parts.addressOf,
    forwardedAddress,
    messages: options.portal.messages as Record<string, PortalTextOverrides> | undefined,
    apps,
    accounts: options.accounts,
    canUnlock: parts.holds.byTenant,
    sessions: new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), cookieKeys, PORTAL_SESSION_SECONDS),
    factors: parts.factors,
    // The sign-in's passkeys: one relying party (the public base URL, never a request's Host).
    passkeys: parts.passkeys,
    logger: parts.logger,
  }, portalApp);
}
