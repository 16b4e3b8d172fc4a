import {
  checkBackchannelLogoutUri,
  deliveryRefusal,
  exceptionsFor,
  PrivateHosts,
  privateHostProblem,
  publicHttpsProblem,
  privateHostsSchema,
  specialUseRange,
  validateBackchannelLogoutUri,
} from '../../policies/backchannel-logout.js';
import { ValidationError } from '../../policies/errors.js';

const TENANT = 'acme';

/** Public names a tenant may register (`.example` is a name like any other; its port is checked). */
const tenantAccepted = [
  'https://app.example.com/backchannel',
  'https://app.example.com:443/backchannel',
  'https://x.example/bc',
  'https://reports.example/backchannel',
  'https://hr.acme.co.uk/oidc/logout?tenant=acme',
  'https://logout.xn--bcher-kva.example/bc',
  'https://a-b.example.org/',
  'https://10.example.com/bc',
  'https://1.2.3.example.com/bc',
  'https://localhost-app.example.com/bc',
  'https://local.example.com/bc',
  'HTTPS://APP.EXAMPLE.COM/bc',
  // Four labels that are not all decimal octets 0..255 spell no address.
  'https://app.1.2.3.256.example.com/bc',
  'https://999.1.2.3.example.com/bc',
  'https://0x1.2.3.4.example.com/bc',
  'https://1e2.2.3.4.example.com/bc',
  'https://1.2.3.a4.example.com/bc',
  'https://1.2.3.4a.example.com/bc',
];

/** What a tenant may not register, with the rule's words: every name of the review, and more. */
const tenantRefused: Array<[string, RegExp]> = [
  // The review's names.
  ['https://127.0.0.1.nip.io/', /spells an IP address/],
  ['https://foo.localhost/', /\.localhost names are special-use or private/],
  ['https://metadata.google.internal/', /\.internal names/],
  ['https://intranet.corp/', /\.corp names/],
  ['https://x.example:6379/', /port 443/],
  // Special-use and private names.
  ['https://localhost/bc', /single label/],
  ['https://LOCALHOST.localhost/bc', /\.localhost names/],
  ['https://printer.local/bc', /\.local names/],
  ['https://billing.default.svc.cluster.local/bc', /\.local names/],
  ['https://host.docker.internal/bc', /\.internal names/],
  ['https://1.0.0.127.in-addr.arpa/bc', /\.arpa names/],
  ['https://router.home.arpa/bc', /\.arpa names/],
  ['https://app.test/bc', /\.test names/],
  ['https://app.invalid/bc', /\.invalid names/],
  ['https://hidden.onion/bc', /\.onion names/],
  ['https://nas.home/bc', /\.home names/],
  ['https://nas.lan/bc', /\.lan names/],
  ['https://wiki.intranet/bc', /\.intranet names/],
  ['https://db.private/bc', /\.private names/],
  ['https://box.localdomain/bc', /\.localdomain names/],
  ['https://billing.default.svc/bc', /\.svc names/],
  ['https://vault.service.consul/bc', /\.consul names/],
  ['https://exchange.mail/bc', /\.mail names/],
  ['https://intranet/bc', /single label/],
  ['https://metadata/bc', /single label/],
  // IP literals in every written form.
  ['https://127.0.0.1/bc', /not an IP address/],
  ['https://10.0.0.5/bc', /not an IP address/],
  ['https://169.254.169.254/latest/meta-data', /not an IP address/],
  ['https://8.8.8.8/bc', /not an IP address/],
  ['https://2130706433/bc', /not an IP address/],
  ['https://0x7f.1/bc', /not an IP address/],
  ['https://127.1/bc', /not an IP address/],
  ['https://[::1]/bc', /not an IP address/],
  ['https://[::ffff:127.0.0.1]/bc', /not an IP address/],
  ['https://[2001:4860::8888]/bc', /not an IP address/],
  // Names that spell an address, and wildcard-DNS services.
  ['https://10.0.0.1.sslip.io/bc', /spells an IP address/],
  ['https://app.192.168.1.1.example.com/bc', /spells an IP address/],
  ['https://127-0-0-1.sslip.io/bc', /spells an IP address/],
  ['https://7f000001.nip.io/bc', /spells an IP address/],
  ['https://anything.localtest.me/bc', /spells an IP address/],
  ['https://lvh.me/bc', /spells an IP address/],
  ['https://10.0.0.1.xip.io/bc', /spells an IP address/],
  ['https://app.traefik.me/bc', /spells an IP address/],
  ['https://x.vcap.me/bc', /spells an IP address/],
  ['https://app.255.255.255.255.example.com/bc', /spells an IP address/],
  ['https://app.0.0.0.0.example.com/bc', /spells an IP address/],
  // The last special-use and private suffixes of the list.
  ['https://app.alt/bc', /\.alt names/],
  ['https://wiki.intra/bc', /\.intra names/],
  ['https://db.priv/bc', /\.priv names/],
  // Ports and schemes.
  ['https://app.example.com:8443/bc', /port 443/],
  ['https://app.example.com:80/bc', /port 443/],
  ['http://app.example.com/bc', /plain http|https/],
  ['http://localhost:4000/bc', /^must be an https URI: our server posts logout tokens to it$/],
  ['http://127.0.0.1:4000/bc', /^must be an https URI: our server posts logout tokens to it$/],
  // What every back-channel URI must be, the operator's too.
  ['myapp://logout', /called by our server/],
  ['https://app.example.com/bc#x', /fragment/],
  ['https://user@app.example.com/bc', /user information/],
];

describe('back-channel logout URIs (policies/backchannel-logout.ts)', () => {
  it.each(tenantAccepted)('a tenant may register %s', (uri) => {
    expect(checkBackchannelLogoutUri(uri, TENANT)).toEqual({ ok: true });
    expect(validateBackchannelLogoutUri(uri, TENANT)).toBe(uri);
  });

  it.each(tenantRefused)('a tenant may not register %s', (uri, rule) => {
    const verdict = checkBackchannelLogoutUri(uri, TENANT);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.rule).toMatch(rule);
    let thrown: unknown;
    try {
      validateBackchannelLogoutUri(uri, TENANT, 'backchannelLogoutUri');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as ValidationError).field).toBe('backchannelLogoutUri');
    // The description is the rule: no quotes, no URI (RFC 6749's error_description characters).
    expect((thrown as ValidationError).description).not.toMatch(/["\\]/);
  });

  // The redirect-URI rule refuses a trailing dot before; another caller (a provider's issuer) gets here.
  it.each([
    ['https://foo.localhost./', 'must be a public host name: .localhost names are special-use or private'],
    ['https://printer.local./', 'must be a public host name: .local names are special-use or private'],
    ['http://idp.example.com/', 'must be an https URI: our server posts logout tokens to it'],
  ])('publicHttpsProblem(%s) names the rule', (uri, rule) => {
    expect(publicHttpsProblem(uri)).toBe(rule);
  });

  it('names the field backchannelLogoutUri unless told another', () => {
    expect(() => validateBackchannelLogoutUri('https://app.test/bc', TENANT)).toThrow(expect.objectContaining({ field: 'backchannelLogoutUri' }));
    expect(() => validateBackchannelLogoutUri('https://app.test/bc', TENANT, 'apps[0].uri')).toThrow(expect.objectContaining({ field: 'apps[0].uri' }));
  });

  it.each([
    'http://localhost:4000/bc',
    'http://127.0.0.1:4000/bc',
    'https://billing.default.svc.cluster.local/bc',
    'https://intranet.corp/bc',
    'https://10.0.0.5:8443/bc',
    'https://app.example.com:6379/bc',
  ])("the operator's own app (no tenant) may register %s: the address is checked at delivery", (uri) => {
    expect(checkBackchannelLogoutUri(uri)).toEqual({ ok: true });
  });

  it.each([
    ['myapp://logout', /called by our server/],
    ['http://app.example.com/bc', /plain http/],
    ['http://10.0.0.5/bc', /plain http/],
    ['https://app.example.com/bc#x', /fragment/],
    ['javascript://x', /javascript: scheme/],
    ['', /non-empty/],
  ])("the operator's own app may not register %s", (uri, rule) => {
    const verdict = checkBackchannelLogoutUri(uri);
    expect(verdict.ok ? '' : verdict.rule).toMatch(rule);
  });
});

/** Addresses and the special-use range each lies in (undefined: public). */
const addresses: Array<[string, string | undefined]> = [
  ['8.8.8.8', undefined],
  ['1.1.1.1', undefined],
  ['93.184.216.34', undefined],
  ['172.32.0.1', undefined],
  ['100.128.0.1', undefined],
  ['2001:4860:4860::8888', undefined],
  ['2606:4700::1111', undefined],
  ['0.0.0.0', 'this network'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'shared address space, CGNAT'],
  ['100.127.255.255', 'shared address space, CGNAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link-local, cloud metadata'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['192.0.0.8', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped'],
  ['::ffff:8.8.8.8', 'IPv4-mapped'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['fe80::1', 'link-local'],
  ['ff02::1', 'multicast'],
  ['::127.0.0.1', 'reserved'],
  ['64:ff9b::7f00:1', 'reserved'],
  ['100::1', 'reserved'],
  ['fec0::1', 'reserved'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001::1', 'IETF protocol assignments, Teredo'],
  ['2002:7f00:1::1', '6to4'],
  ['fe80::1%eth0', 'link-local'],
  ['localhost', 'not an IP address'],
];

describe('special-use addresses (delivery)', () => {
  it.each(addresses)('%s: %s', (address, range) => {
    expect(specialUseRange(address)).toBe(range);
  });

  it('without exceptions, one special-use address refuses the name, whatever else it resolves to', () => {
    expect(deliveryRefusal('app.example.com', ['93.184.216.34'])).toBeUndefined();
    expect(deliveryRefusal('app.example.com', ['93.184.216.34', '10.0.0.1'])).toEqual({ address: '10.0.0.1', range: 'private' });
    expect(deliveryRefusal('localhost', ['127.0.0.1'])).toEqual({ address: '127.0.0.1', range: 'loopback' });
    expect(deliveryRefusal('app.example.com', [])).toEqual({ address: '(none)', range: 'no address' });
  });

  it("the operator's exceptions: a listed name (any address), a listed network or address", () => {
    const hosts = new PrivateHosts(['billing.internal', 'LocalHost', '10.20.0.0/16', '127.0.0.1', 'fd00::/8']);
    expect(deliveryRefusal('billing.internal', ['10.99.0.1', '127.0.0.1'], hosts)).toBeUndefined();
    expect(deliveryRefusal('BILLING.INTERNAL.', ['10.99.0.1'], hosts)).toBeUndefined();
    expect(deliveryRefusal('localhost', ['127.0.0.1'], hosts)).toBeUndefined();
    expect(deliveryRefusal('svc.example', ['10.20.3.4'], hosts)).toBeUndefined();
    expect(deliveryRefusal('svc.example', ['10.21.3.4'], hosts)).toEqual({ address: '10.21.3.4', range: 'private' });
    expect(deliveryRefusal('127.0.0.1', ['127.0.0.1'], hosts)).toBeUndefined();
    expect(deliveryRefusal('127.0.0.2', ['127.0.0.2'], hosts)).toEqual({ address: '127.0.0.2', range: 'loopback' });
    expect(deliveryRefusal('svc6.example', ['fd00::5'], hosts)).toBeUndefined();
    expect(deliveryRefusal('svc6.example', ['fd00::5', '169.254.169.254'], hosts)).toEqual({ address: '169.254.169.254', range: 'link-local, cloud metadata' });
    // A listed name is that name exactly: not its subdomains, not a name that contains it.
    expect(deliveryRefusal('x.billing.internal', ['10.99.0.1'], hosts)).toEqual({ address: '10.99.0.1', range: 'private' });
    expect(deliveryRefusal('billing.internal.example.com', ['10.99.0.1'], hosts)).toEqual({ address: '10.99.0.1', range: 'private' });
  });

  it("apply to the operator's apps only: never to a tenant's app or a request made for no app", () => {
    const hosts = new PrivateHosts(['localhost', '10.0.0.0/8']);
    expect(deliveryRefusal('localhost', ['127.0.0.1'], exceptionsFor({}, hosts))).toBeUndefined();
    expect(deliveryRefusal('localhost', ['127.0.0.1'], exceptionsFor({ tenant: 'acme' }, hosts))).toEqual({ address: '127.0.0.1', range: 'loopback' });
    expect(deliveryRefusal('app.example.com', ['10.0.0.1'], exceptionsFor({ tenant: 'acme' }, hosts))).toEqual({ address: '10.0.0.1', range: 'private' });
    expect(deliveryRefusal('localhost', ['127.0.0.1'], exceptionsFor(undefined, hosts))).toEqual({ address: '127.0.0.1', range: 'loopback' });
  });

  it.each([
    ['localhost', undefined],
    ['billing.default.svc.cluster.local', undefined],
    ['Billing-API', undefined],
    ['127.0.0.1', undefined],
    ['::1', undefined],
    ['10.0.0.0/8', undefined],
    ['0.0.0.0/0', undefined],
    ['fd00::/8', undefined],
    ['a.example', undefined],
    ['x', undefined],
    ['svc.a', undefined],
    ['10.0.0.0/16', undefined],
    ['10.0.0.0/32', undefined],
    ['fd00::/64', undefined],
    ['fd00::/128', undefined],
    ['host-', /host name, an IP address or a CIDR/],
    ['-host', /host name, an IP address or a CIDR/],
    ['a..b', /host name, an IP address or a CIDR/],
    ['10.0.0.0/x8', /prefix length must be 0\.\.32/],
    ['10.0.0.0/8x', /prefix length must be 0\.\.32/],
    ['10.0.0.0/0008', /prefix length must be 0\.\.32/],
    ['10.0.0.0/', /prefix length must be 0\.\.32/],
    ['10.0.0.0/33', /prefix length must be 0\.\.32/],
    ['fd00::/129', /prefix length must be 0\.\.128/],
    ['10.0.0.0/x', /prefix length/],
    ['10.0.0/8', /host name, an IP address or a CIDR/],
    ['*.internal', /host name, an IP address or a CIDR/],
    ['http://localhost', /host name, an IP address or a CIDR/],
    ['[::1]', /host name, an IP address or a CIDR/],
    ['', /host name, an IP address or a CIDR/],
  ])('a privateHosts entry %s', (entry, problem) => {
    if (problem === undefined) expect(privateHostProblem(entry)).toBeUndefined();
    else expect(privateHostProblem(entry)).toMatch(problem);
  });

  it('a host name is compared in lower case, without a trailing dot; an address that is no IP is held by no network', () => {
    const hosts = new PrivateHosts(['Billing.Internal', '10.0.0.0/8']);
    expect(hosts.hasName('billing.internal')).toBe(true);
    expect(hosts.hasName('BILLING.internal.')).toBe(true);
    expect(hosts.hasName('billing.internal..')).toBe(false);
    expect(hosts.holds('10.1.2.3')).toBe(true);
    expect(hosts.holds('billing.internal')).toBe(false);
    expect(hosts.holds('')).toBe(false);
  });
});

describe('the privateHosts option (privateHostsSchema)', () => {
  it('is empty by default and takes valid entries', () => {
    expect(privateHostsSchema.parse(undefined)).toEqual([]);
    expect(privateHostsSchema.parse(['localhost', '10.0.0.0/8'])).toEqual(['localhost', '10.0.0.0/8']);
  });
  it('refuses an entry naming it and its problem', () => {
    const result = privateHostsSchema.safeParse(['localhost', '10.0.0.0/33']);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => [issue.path, issue.message])).toEqual([[[1], '10.0.0.0/33: the prefix length must be 0..32']]);
  });
  it('bounds each entry to 253 characters and the list to 100 entries', () => {
    const label = 'a'.repeat(49);
    const name253 = [label, label, label, label, label, label].join('.').slice(0, 253);
    expect(name253).toHaveLength(253);
    expect(privateHostsSchema.safeParse([name253]).success).toBe(true);
    expect(privateHostsSchema.safeParse([`${name253}a`]).success).toBe(false);
    const hundred = Array.from({ length: 100 }, (_, index) => `host${index}`);
    expect(privateHostsSchema.safeParse(hundred).success).toBe(true);
    expect(privateHostsSchema.safeParse([...hundred, 'one-more']).success).toBe(false);
  });
});
