import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import { ValidationError } from './errors.js';
import { checkRedirectUri } from './redirect-uris.js';

/**
 * BACK-CHANNEL LOGOUT: where our server may post an app's logout tokens. Our server makes these
 * requests itself, from inside the operator's network, so the URI is a request forgery risk:
 *
 * - Registration, the operator's own apps (no tenant; the library or the CLI): the redirect-URI
 *   syntax rules, https, or plain http on a loopback host (a local app); never a deep link.
 * - Registration, a tenant's app (the management API, the portal, the library with `tenant`): also
 *   https on port 443 to a public host name. Refused: IP literals (v4 or v6, in any written form),
 *   single-label names, special-use and private names (`localhost`, `.local`, `.internal`, `.arpa`,
 *   `.test`, `.invalid`, `.onion`, `.alt`, `.corp`, `.home`, `.lan`, `.intranet`, ...), names that
 *   spell an IPv4 address (`127.0.0.1.nip.io`) and the wildcard-DNS services that answer for them.
 *   A name is only what its owner's DNS says it is: the address is checked again at delivery.
 * - Delivery: every address the host name resolves to is checked before we connect (an IP literal
 *   before anything): a special-use address (loopback, private, link-local and cloud metadata,
 *   shared CGNAT, unique-local, multicast, reserved, documentation, IPv4-mapped, unspecified) is
 *   refused, unless the app is the operator's and the operator listed its host name, or a network
 *   holding the address, in `backchannelLogout.privateHosts`. A tenant's app never gets that
 *   exception: a name its owner controls could point anywhere.
 */

/** Whether a back-channel logout URI may be registered, and the rule it broke if not. */
export type BackchannelUriVerdict = { ok: true } | { ok: false; rule: string };

/**
 * Names no public host has: special-use names (localhost, .local for mDNS, .test, .invalid,
 * .onion, .alt, .arpa with home.arpa), the names reserved for private networks (.internal), and
 * the private suffixes networks use in practice (ICANN never delegated .corp, .home, .mail for
 * that reason; .lan, .intranet, .private, .localdomain; Kubernetes' .svc, Consul's .consul).
 */
const PRIVATE_SUFFIXES: readonly string[] = [
  'localhost', 'local', 'internal', 'arpa', 'test', 'invalid', 'onion', 'alt',
  'corp', 'home', 'mail', 'lan', 'intranet', 'intra', 'private', 'priv', 'localdomain', 'svc', 'consul',
];

/** Public wildcard-DNS services: any name under them resolves to the address it spells. */
const WILDCARD_DNS: readonly string[] = ['nip.io', 'sslip.io', 'xip.io', 'traefik.me', 'localtest.me', 'lvh.me', 'vcap.me'];

const endsWith = (host: string, suffix: string): boolean => host === suffix || host.endsWith(`.${suffix}`);

/** Four decimal labels in a row, each 0..255: a name that spells an IPv4 address. */
function spellsIpv4(host: string): boolean {
  const labels = host.split('.');
  const octet = (label: string) => /^\d{1,3}$/.test(label) && Number(label) <= 255;
  return labels.some((_label, index) => index + 4 <= labels.length && labels.slice(index, index + 4).every(octet));
}

/**
 * The tenant rule on a URI our server calls that already passed the operator's: https, port 443,
 * a public name (also the rule of a tenant's identity provider: policies/upstream-issuer.ts).
 * @param calledFor What our server calls it for, in the message of a URI that is not https.
 */
export function publicHttpsProblem(uri: string, calledFor = 'our server posts logout tokens to it'): string | undefined {
  const url = new URL(uri);
  if (url.protocol !== 'https:') return `must be an https URI: ${calledFor}`;
  // The URL parser drops the default port: any port left is not 443.
  if (url.port !== '') return 'must use the https port 443 (no other port)';
  // The parsed host: the parser turns 2130706433 or 0x7f.1 into 127.0.0.1 and lower-cases names.
  const host = url.hostname.replace(/\.$/, '');
  if (host.startsWith('[') || isIP(host) !== 0) return 'must name a host, not an IP address';
  if (!host.includes('.')) return 'must be a fully qualified public host name (not a single label)';
  const suffix = PRIVATE_SUFFIXES.find((name) => endsWith(host, name));
  if (suffix) return `must be a public host name: .${suffix} names are special-use or private`;
  if (spellsIpv4(host) || WILDCARD_DNS.some((name) => endsWith(host, name))) {
    return 'must be a public host name, not a name that spells an IP address';
  }
  return undefined;
}

/**
 * Whether `uri` may be an app's back-channel logout URI: the operator's app (`tenant` absent) by
 * the operator rule, a tenant's app by the tenant rule as well (see the module's comment).
 */
export function checkBackchannelLogoutUri(uri: unknown, tenant?: string): BackchannelUriVerdict {
  const verdict = checkRedirectUri(uri);
  if (!verdict.ok) return verdict;
  if (verdict.kind === 'deep-link') return { ok: false, rule: 'must be an https URI (or http on localhost): it is called by our server' };
  const rule = tenant === undefined ? undefined : publicHttpsProblem(uri as string);
  return rule ? { ok: false, rule } : { ok: true };
}

/**
 * Registration time: the URI, or a ValidationError naming `field` and the rule it broke.
 * @param tenant The app's tenant; absent for the operator's own apps.
 */
export function validateBackchannelLogoutUri(uri: unknown, tenant?: string, field = 'backchannelLogoutUri'): string {
  const verdict = checkBackchannelLogoutUri(uri, tenant);
  if (!verdict.ok) throw new ValidationError(field, verdict.rule);
  return uri as string;
}

type Family = 'ipv4' | 'ipv6';

function range(name: string, family: Family, ...subnets: Array<[string, number]>): { name: string; family: Family; list: BlockList } {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return { name, family, list };
}

/** The special-use IPv4 ranges (the IANA special-purpose registry, and multicast and class E). */
const SPECIAL_IPV4 = [
  range('this network', 'ipv4', ['0.0.0.0', 8]),
  range('private', 'ipv4', ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]),
  range('shared address space, CGNAT', 'ipv4', ['100.64.0.0', 10]),
  range('loopback', 'ipv4', ['127.0.0.0', 8]),
  range('link-local, cloud metadata', 'ipv4', ['169.254.0.0', 16]),
  range('documentation', 'ipv4', ['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24]),
  range('benchmarking', 'ipv4', ['198.18.0.0', 15]),
  range('reserved', 'ipv4', ['192.0.0.0', 24], ['192.31.196.0', 24], ['192.52.193.0', 24], ['192.88.99.0', 24], ['192.175.48.0', 24], ['240.0.0.0', 4]),
  range('multicast', 'ipv4', ['224.0.0.0', 4]),
];

/** IPv6 outside global unicast (2000::/3) is special-use; these name its parts. */
const SPECIAL_IPV6_OUTSIDE_GLOBAL = [
  range('unspecified', 'ipv6', ['::', 128]),
  range('loopback', 'ipv6', ['::1', 128]),
  range('IPv4-mapped', 'ipv6', ['::ffff:0:0', 96]),
  range('unique-local', 'ipv6', ['fc00::', 7]),
  range('link-local', 'ipv6', ['fe80::', 10]),
  range('multicast', 'ipv6', ['ff00::', 8]),
];
const GLOBAL_UNICAST = range('global unicast', 'ipv6', ['2000::', 3]);
/** The special-use ranges inside 2000::/3. */
const SPECIAL_IPV6_GLOBAL = [
  range('IETF protocol assignments, Teredo', 'ipv6', ['2001::', 23]),
  range('documentation', 'ipv6', ['2001:db8::', 32], ['3fff::', 20]),
  range('6to4', 'ipv6', ['2002::', 16]),
];

/**
 * The special-use range an address lies in ('loopback', 'private', ...), or undefined for a
 * public address. Anything that is not a plain IP address is 'not an IP address' (refused).
 */
export function specialUseRange(address: string): string | undefined {
  const family = isIP(address);
  try {
    if (family === 4) return SPECIAL_IPV4.find((entry) => entry.list.check(address, 'ipv4'))?.name;
    if (family === 6) {
      // Each family's rules only (a BlockList matches IPv4 rules against IPv4-mapped addresses).
      if (!GLOBAL_UNICAST.list.check(address, 'ipv6')) {
        return SPECIAL_IPV6_OUTSIDE_GLOBAL.find((entry) => entry.list.check(address, 'ipv6'))?.name ?? 'reserved';
      }
      return SPECIAL_IPV6_GLOBAL.find((entry) => entry.list.check(address, 'ipv6'))?.name;
    }
  } catch {
    // A zone index or another form the checker does not take: not something to connect to.
  }
  return 'not an IP address';
}

/** A host name as `privateHosts` and the delivery compare it: lower case, no trailing dot. */
const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** An entry of `backchannelLogout.privateHosts` as written, or why it is not one. */
export function privateHostProblem(entry: string): string | undefined {
  const kinds = 'must be a host name, an IP address or a CIDR range (10.0.0.0/8, fd00::/8)';
  const slash = entry.indexOf('/');
  if (slash === -1) return isIP(entry) !== 0 || HOST_NAME.test(entry.toLowerCase()) ? undefined : kinds;
  const family = isIP(entry.slice(0, slash));
  const prefix = entry.slice(slash + 1);
  if (family === 0) return kinds;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)) return `the prefix length must be 0..${family === 4 ? 32 : 128}`;
  return undefined;
}

/** The `backchannelLogout.privateHosts` option, each entry checked at start. */
export const privateHostsSchema = z
  .array(z.string().max(253).superRefine((entry, ctx) => {
    const problem = privateHostProblem(entry);
    if (problem) ctx.addIssue({ code: 'custom', message: `${entry}: ${problem}` });
  }))
  .max(100)
  .default([])
  .meta({
    description: 'where [back-channel logout](endpoints.md#back-channel-logout) may post although the address is special-use '
      + "(loopback, private, link-local, ...), for the operator's own apps only, never a tenant's: host names matched exactly "
      + '(`localhost`, `billing.default.svc.cluster.local`; a name allows whatever it resolves to), IP addresses (`127.0.0.1`, '
      + '`::1`) and CIDR ranges (`10.0.0.0/8`, `fd00::/8`; an address or range allows any name that resolves into it), each '
      + 'checked at start. Public hosts need no entry. Without it, logout tokens reach public addresses only',
  });

/**
 * The operator's exceptions to the delivery rule (`backchannelLogout.privateHosts`): host names,
 * matched exactly, and networks (an address alone is a network of one).
 */
export class PrivateHosts {
  private readonly names = new Set<string>();
  private readonly networks = new BlockList();

  /** @param entries Valid entries (privateHostProblem finds none). */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const family = isIP(address!);
      if (family === 0) this.names.add(hostKey(entry));
      else this.networks.addSubnet(address!, prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Whether the host name is listed. */
  hasName(host: string): boolean {
    return this.names.has(hostKey(host));
  }

  /** Whether the address lies in a listed network. */
  holds(address: string): boolean {
    const family = isIP(address);
    // BlockList.check throws only on what isIP refuses (zone IDs pass both).
    return family !== 0 && this.networks.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

const NO_EXCEPTIONS = new PrivateHosts([]);

/** A host name as compared: lower case, without brackets or a trailing dot. */
function hostKey(host: string): string {
  return host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/** Why a delivery to `host` at these addresses is refused, or undefined when it may go. */
export interface DeliveryRefusal {
  address: string;
  range: string;
}

/**
 * Delivery time: whether our server may connect to `host` at every one of `addresses` (all the
 * name resolved to, or the IP literal itself). One refused address refuses the delivery: a name
 * that answers with public and private addresses alike is not trusted with either.
 * @param exceptions The operator's `privateHosts`; only for the operator's own apps.
 */
export function deliveryRefusal(host: string, addresses: readonly string[], exceptions: PrivateHosts = NO_EXCEPTIONS): DeliveryRefusal | undefined {
  if (addresses.length === 0) return { address: '(none)', range: 'no address' };
  if (exceptions.hasName(host)) return undefined;
  for (const address of addresses) {
    const special = specialUseRange(address);
    if (special && !exceptions.holds(address)) return { address, range: special };
  }
  return undefined;
}

/**
 * The exceptions that apply to a delivery: the operator's list for the operator's apps, none for a
 * tenant's app, nor for a request made for no app (`owner` undefined).
 */
export function exceptionsFor(owner: { tenant?: string | undefined } | undefined, privateHosts: PrivateHosts): PrivateHosts {
  return owner !== undefined && owner.tenant === undefined ? privateHosts : NO_EXCEPTIONS;
}
