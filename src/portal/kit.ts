import { PortalApiClient } from './api-client.js';
import { PORTAL_ADDRESS_HEADER } from './address.js';
import { RequestLooks } from './looks.js';
import { PortalPages } from './pages.js';
import { SessionCookies } from './session-cookies.js';
import type { PortalClient, PortalSetup } from './setup.js';
import type { PortalText } from './text.js';

/** What every part of the portal works with, made once per server. */
export interface PortalKit {
  setup: PortalSetup;
  /** The portal's own app. */
  client: PortalClient;
  /** The token endpoint and the APIs, as the portal's app and the session's user. */
  api: PortalApiClient;
  looks: RequestLooks;
  /** The texts of the request's language. */
  t: PortalText;
  cookies: SessionCookies;
  pages: PortalPages;
  /** `{baseUrl}{pathPrefix}{path}`: the portal's public URL. */
  publicUrl: string;
}

/** The portal's parts for a server's setup and the portal's own app. */
export function portalKit(setup: PortalSetup, client: PortalClient): PortalKit {
  const base = `${setup.pathPrefix}${setup.path}`;
  const looks = new RequestLooks(setup.messages);
  // The browser's address goes with every API call of its request, signed (the APIs' audit trail).
  const api = new PortalApiClient(setup.internalBase, client.clientId, client.clientSecret, (): Record<string, string> => {
    const { address } = looks.current();
    return address ? { [PORTAL_ADDRESS_HEADER]: setup.forwardedAddress.sign(address) } : {};
  });
  return {
    setup,
    client,
    api,
    looks,
    t: looks.t,
    cookies: new SessionCookies(setup.sessions, base, setup.baseUrl.startsWith('https:')),
    pages: new PortalPages(setup, looks, base),
    publicUrl: `${setup.baseUrl}${base}`,
  };
}
