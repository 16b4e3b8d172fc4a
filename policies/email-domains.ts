import { isIP } from 'node:net';
import { publicHttpsProblem } from './backchannel-logout.js';
import type { IssuerAuthor } from './upstream-issuer.js';

/**
 * EMAIL DOMAINS A CONNECTION OWNS (home-realm discovery, src/federation/): a user who types an
 * address at one of them is sent to that connection's identity provider, and an identity the
 * provider vouches for may carry an address at them only. So a domain belongs to one connection,
 * of one tenant (src/federation/connections.ts keeps the index), and:
 *
 * - it is a host name as DNS writes it: lower case, IDNs in their ASCII (punycode) form, at least
 *   two labels, no IP address;
 * - named by a tenant, it is a public name (not `.local`, `.internal`, ...: the rule of
 *   policies/backchannel-logout.ts) and not a mailbox provider's shared domain (gmail.com, ...):
 *   a tenant that claimed one would receive the sign-ins of every user of it.
 */

/** Mailbox providers whose addresses belong to everyone: no tenant may claim them. */
const SHARED_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'ymail.com',
  'icloud.com', 'me.com', 'mac.com', 'aol.com', 'proton.me', 'protonmail.com', 'gmx.com', 'gmx.net', 'gmx.de',
  'web.de', 'mail.com', 'yandex.com', 'yandex.ru', 'zoho.com', 'fastmail.com', 'hey.com', 'orange.fr', 'free.fr',
  'laposte.net', 't-online.de', 'qq.com', '163.com',
]);

/** A domain as compared: the URL parser's form of the host (lower case, punycode), no trailing dot. */
export function normalizeDomain(domain: string): string | undefined {
  const trimmed = domain.trim();
  if (trimmed === '' || /[/:@?#\s[\]\\]/.test(trimmed)) return undefined;
  const url = URL.parse(`https://${trimmed}/`);
  return url ? url.hostname.replace(/\.$/, '') : undefined;
}

/** The domain of an email address (normalized), or undefined when it is not one. */
export function domainOfEmail(email: unknown): string | undefined {
  if (typeof email !== 'string' || email.length > 320) return undefined;
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1) return undefined;
  return normalizeDomain(email.slice(at + 1));
}

/** What is wrong with `domain` as a domain a connection owns, named by `author`, or undefined. */
export function emailDomainProblem(domain: string, author: IssuerAuthor): string | undefined {
  const host = normalizeDomain(domain);
  if (!host || host.length > 253) return 'must be a domain name (example.com)';
  if (isIP(host) !== 0) return 'must be a domain name, not an IP address';
  if (!host.includes('.')) return 'must have at least two labels (example.com)';
  if (!/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(host)) return 'must be a domain name (letters, digits, hyphens)';
  if (author === 'tenant') {
    const problem = publicHttpsProblem(`https://${host}/`);
    if (problem) return problem.replace(/host name/g, 'domain');
    if (SHARED_MAIL_DOMAINS.has(host)) return "is a mailbox provider's shared domain: it belongs to no organisation";
  }
  return undefined;
}
