/*
 * What the store asks a Redis address when the start goes wrong in a way that hides its cause: a
 * TLS connection to a Redis that does not speak TLS gets no answer at all (the server waits for the
 * end of a line that the TLS client never sends, so ioredis only gives up at its 10 s connect
 * timeout), and a plain connection to a TLS-only port is cut without a word (ECONNRESET). Each probe
 * opens one connection of its own, sends nothing but a PING or a TLS hello (never credentials),
 * and is closed within its deadline.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { RedisConnectionOptions } from './options.js';

/** A host and port the store connects to, and whether it does so with TLS. */
export interface RedisAddress {
  host: string;
  port: number;
  tls: boolean;
}

/** `host:port` for messages (IPv6 in brackets). */
export function addressText({ host, port }: RedisAddress): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function addressOfUrl(url: string, tls: boolean): RedisAddress | undefined {
  const parsed = URL.parse(url);
  if (!parsed?.hostname) return undefined;
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : 6379,
    tls: tls || parsed.protocol === 'rediss:',
  };
}

/**
 * The addresses the store connects to first: the URL's node, a cluster's given nodes, or the
 * sentinels (a master is found through them), each with whether TLS is used towards it.
 */
export function firstAddresses(options: RedisConnectionOptions): RedisAddress[] {
  const tls = options.tls !== undefined && options.tls !== false;
  if (options.cluster) return options.cluster.nodes.flatMap((url) => addressOfUrl(url, tls) ?? []);
  if (options.sentinel) return options.sentinel.sentinels.map(({ host, port }) => ({ host, port, tls }));
  const single = options.url === undefined ? undefined : addressOfUrl(options.url, tls);
  return single ? [single] : [];
}

/** Runs `probe` on a socket and settles with its verdict, false at the deadline; the socket is always destroyed. */
function withSocket(socket: Socket, ms: number, probe: (settle: (verdict: boolean) => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (verdict: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => settle(false), ms);
    socket.once('error', () => settle(false));
    socket.once('close', () => settle(false));
    probe(settle);
  });
}

/**
 * True when plain Redis answers at `address`: a PING without TLS gets a RESP reply (`+PONG`, or
 * `-NOAUTH ...` from a Redis with a password). A TLS port cuts the connection instead.
 */
export function answersPlainRedis(address: RedisAddress, ms: number): Promise<boolean> {
  const socket = tcpConnect({ host: address.host, port: address.port });
  return withSocket(socket, ms, (settle) => {
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk: Buffer) => settle(chunk[0] === 0x2b /* + */ || chunk[0] === 0x2d /* - */));
  });
}

/**
 * True when `address` completes a TLS handshake. Its certificate is not checked: this only tells
 * "this port speaks TLS" apart from "nothing usable here", and nothing is sent after the hello.
 */
export function answersTls(address: RedisAddress, ms: number): Promise<boolean> {
  const socket = tlsConnect({ host: address.host, port: address.port, rejectUnauthorized: false });
  return withSocket(socket, ms, (settle) => socket.once('secureConnect', () => settle(true)));
}

/** The first of `addresses` for which `probe` says true, asked all at once; undefined when none does. */
export async function firstAnswering(
  addresses: readonly RedisAddress[],
  probe: (address: RedisAddress) => Promise<boolean>,
): Promise<RedisAddress | undefined> {
  const verdicts = await Promise.all(addresses.map(probe));
  return addresses.find((_, index) => verdicts[index]);
}
