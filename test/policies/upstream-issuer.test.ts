import { isLoopbackHost, issuerProblem } from '../../policies/upstream-issuer.js';

/** Which issuer a connection may name (policies/upstream-issuer.ts): a request forgery risk, ruled by who names it. */
describe('upstream issuers (policies/upstream-issuer.ts)', () => {
  it.each<[string, boolean]>([
    ['localhost', true],
    ['LOCALHOST', true],
    ['localhost.', true],
    ['idp.localhost', true],
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['[::1]', true],
    ['::1', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['[::2]', false],
    ['localhost.example', false],
    ['notlocalhost', false],
    ['127.example', false],
  ])('%j is a loopback host: %j', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it.each<[string, 'operator' | 'tenant', string | undefined]>([
    ['https://idp.example', 'tenant', undefined],
    ['https://idp.example/realms/acme', 'operator', undefined],
    ['https://idp.example/', 'tenant', undefined],
    ['not a url', 'operator', 'must be an absolute https URL'],
    ['ftp://idp.example', 'operator', 'must be an absolute https URL'],
    ['git+https://idp.example', 'operator', 'must be an absolute https URL'],
    ['/relative', 'operator', 'must be an absolute https URL'],
    ['https://user@idp.example', 'operator', 'must not hold credentials'],
    ['https://:secret@idp.example', 'operator', 'must not hold credentials'],
    ['https://idp.example?tenant=acme', 'operator', 'must have no query or fragment'],
    ['https://idp.example#top', 'operator', 'must have no query or fragment'],
    ['https://idp.example/?', 'operator', 'must have no query or fragment'],
    ['https://idp.example/#', 'operator', 'must have no query or fragment'],
    // The operator: plain http on a loopback host only.
    ['http://localhost:8080', 'operator', undefined],
    ['http://127.0.0.1:9000/idp', 'operator', undefined],
    ['http://[::1]:9000', 'operator', undefined],
    ['http://idp.example', 'operator', 'must be https (plain http only on a loopback host: localhost, 127.0.0.1, [::1])'],
    ['https://10.0.0.5', 'operator', undefined],
    // A tenant: https on 443 to a public host name, whatever it names.
    ['http://localhost:8080', 'tenant', "must be an https URI: our server fetches the provider's metadata from it"],
    ['https://idp.example:8443', 'tenant', 'must use the https port 443 (no other port)'],
    ['https://10.0.0.5', 'tenant', 'must name a host, not an IP address'],
    ['https://idp.internal', 'tenant', 'must be a public host name: .internal names are special-use or private'],
  ])('%j named by the %s: %j', (issuer, author, problem) => {
    expect(issuerProblem(issuer, author)).toBe(problem);
  });
});
