import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The connections made through the proxy so far, in order. */
  readonly connections: number;
  /**
   * Stops carrying bytes on connection `index` (0-based) in both directions while keeping both
   * sockets open: a NAT that dropped the flow without a word.
   */
  blackhole(index: number): void;
  /**
   * Arms the proxy: the next client chunk that `matches` is carried to Redis, which carries it out,
   * but its answer never comes back: the proxy swallows it and closes that connection, as a Redis
   * that dies between doing a command and answering it (or, with `close: false`, keeps it open and
   * silent from then on, as a Redis that stops answering). Resolves once that has happened.
   */
  dropReplyTo(matches: (chunk: Buffer) => boolean, options?: { close?: boolean }): Promise<void>;
  /** Every reply from now on reaches the client `ms` later (in order): a distant Redis. */
  delayReplies(ms: number): void;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `targetPort`, whose connections can be made to go silent. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs: Array<{ client: Socket; upstream: Socket; silent: boolean; dropNextReply?: () => void }> = [];
  let armed: { matches: (chunk: Buffer) => boolean; close: boolean; done: () => void } | undefined;
  let replyDelayMs = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const pair: (typeof pairs)[number] = { client, upstream, silent: false };
    pairs.push(pair);
    client.on('data', (chunk) => {
      if (pair.silent) return;
      if (armed?.matches(chunk)) {
        const { done, close } = armed;
        armed = undefined;
        pair.dropNextReply = () => {
          pair.silent = true;
          if (close) {
            client.destroy();
            upstream.destroy();
          }
          done();
        };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (pair.dropNextReply) return pair.dropNextReply();
      if (pair.silent) return;
      if (replyDelayMs === 0) client.write(chunk);
      else setTimeout(() => pair.silent || client.destroyed || client.write(chunk), replyDelayMs);
    });
    // A silent flow tells neither side that the other went.
    client.on('close', () => {
      if (!pair.silent) upstream.destroy();
    });
    upstream.on('close', () => {
      if (!pair.silent) client.destroy();
    });
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    get connections() {
      return pairs.length;
    },
    dropReplyTo(matches, { close = true } = {}) {
      return new Promise<void>((resolve) => {
        armed = { matches, close, done: resolve };
      });
    },
    delayReplies(ms) {
      replyDelayMs = ms;
    },
    blackhole(index) {
      const pair = pairs[index];
      if (!pair) throw new Error(`no connection ${index}`);
      pair.silent = true;
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
