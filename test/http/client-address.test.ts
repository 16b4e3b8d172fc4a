import type { Context } from 'koa';
import { clientAddress } from '../../src/http/client-address.js';

function request(socket: string, forwardedFor?: string): Context {
  return {
    req: { socket: { remoteAddress: socket } },
    get: (name: string) => (name.toLowerCase() === 'x-forwarded-for' ? forwardedFor ?? '' : ''),
  } as unknown as Context;
}

describe('client address for rate limits', () => {
  it.each<[string, number, string, string | undefined, string]>([
    ['no proxy: the socket, whatever the header says', 0, '10.0.0.1', '203.0.113.9', '10.0.0.1'],
    ['IPv4-mapped IPv6 socket address', 0, '::ffff:10.0.0.1', undefined, '10.0.0.1'],
    ['one proxy: the entry it appended', 1, '10.0.0.1', '203.0.113.9', '203.0.113.9'],
    ['one proxy: what the client sent before it does not count', 1, '10.0.0.1', '198.51.100.1, 203.0.113.9', '203.0.113.9'],
    ['two proxies: the entry the outer one appended', 2, '10.0.0.1', '198.51.100.1, 203.0.113.9, 10.0.0.7', '203.0.113.9'],
    ['fewer entries than proxies: the socket', 2, '10.0.0.1', '203.0.113.9', '10.0.0.1'],
    ['no header behind a proxy: the socket', 1, '10.0.0.1', undefined, '10.0.0.1'],
    ['a header entry that is no address: the socket', 1, '10.0.0.1', `${'x'.repeat(8000)}`, '10.0.0.1'],
    ['an entry with a port', 1, '10.0.0.1', '203.0.113.9:4711', '203.0.113.9'],
    ['IPv6 counts by /64', 1, '10.0.0.1', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['IPv6 compressed, bracketed with a port', 1, '10.0.0.1', '[2001:db8::1]:443', '2001:db8:0:0::/64'],
    ['IPv6 socket', 0, '2001:db8:0:5::9', undefined, '2001:db8:0:5::/64'],
  ])('%s', (_name, hops, socket, header, expected) => {
    expect(clientAddress(hops)(request(socket, header))).toBe(expected);
  });
});
