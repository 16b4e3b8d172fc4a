import { isIP } from 'node:net';
import { publicHttpsProblem } from './backchannel-logout.js';

/**
 * UPSTREAM ISSUERS: which identity provider a tenant's connection may name (src/federation/). Our
 * server fetches the provider's discovery document and keys and posts codes to its token endpoint
 * from inside the operator's network, so the issuer is a request forgery risk, ruled like a
 * back-channel logout URI (policies/backchannel-logout.ts):
 *
 * - Every issuer: an absolute URL without credentials, query or fragment (OpenID Connect Discovery
 *   §4.3: the issuer identifier is compared as a string with the `issuer` of its discovery
 *   document, so it is kept exactly as written, without a trailing slash added or removed).
 * - Named by the operator (the library): https to any host, or plain http on a loopback host
 *   (`localhost`, 127.0.0.0/8, `[::1]`): a provider on the operator's own machine, for
 *   development and tests. Its host is then reachable although special-use (the operator chose it).
 * - Named by a tenant (the management API, the portal): https on port 443 to a public host name.
 *   Whatever the name resolves to is checked again at every request (src/federation/fetch.ts).
 */

/** Who names an issuer: the operator (library, CLI) or a tenant's admin (management API, portal). */
export type IssuerAuthor = 'operator' | 'tenant';

/** A loopback host as the URL parser writes it. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** What is wrong with `issuer` as a connection's issuer named by `author`, or undefined. */
export function issuerProblem(issuer: string, author: IssuerAuthor): string | undefined {
  const url = URL.parse(issuer);
  if (!url || !/^https?:$/.test(url.protocol)) return 'must be an absolute https URL';
  if (url.username || url.password) return 'must not hold credentials';
  // As written: the parser leaves `search` and `hash` empty for a bare `?` or `#`.
  if (issuer.includes('?') || issuer.includes('#')) return 'must have no query or fragment';
  if (author === 'tenant') return publicHttpsProblem(issuer, "our server fetches the provider's metadata from it");
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return 'must be https (plain http only on a loopback host: localhost, 127.0.0.1, [::1])';
  return undefined;
}
