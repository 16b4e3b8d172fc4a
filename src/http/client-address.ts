import { isIP } from 'node:net';
import type { Context } from 'koa';

/** `1.2.3.4:5678` and `[::1]:5678` (some proxies add ports) and IPv4-mapped IPv6, as plain addresses. */
function plain(entry: string): string {
  let value = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed?.[1]) value = bracketed[1];
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(value);
  return mapped?.[1] ?? value;
}

/** The first four groups of an IPv6 address: anyone holding a /64 holds all of its addresses. */
function ipv6Network(address: string): string {
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

function counted(address: string): string {
  return isIP(address) === 6 ? ipv6Network(address) : address;
}

/**
 * The address a request counts against in rate limits. Without a proxy, the socket's. Behind
 * `trustedHops` proxies, the entry of X-Forwarded-For that the outermost trusted proxy added (each
 * proxy appends the address it saw, so entries left of it are whatever the client sent). Anything
 * that is not an IP address falls back to the socket's, so no header value becomes a counter key.
 * IPv6 addresses count by /64.
 */
export function clientAddress(trustedHops: number): (ctx: Context) => string {
  return (ctx) => {
    const socket = plain(ctx.req.socket.remoteAddress ?? 'unknown');
    if (trustedHops === 0) return counted(socket);
    const forwarded = (ctx.get('x-forwarded-for') || '').split(',');
    const entry = forwarded.length >= trustedHops ? plain(forwarded[forwarded.length - trustedHops] ?? '') : '';
    return counted(isIP(entry) ? entry : socket);
  };
}
