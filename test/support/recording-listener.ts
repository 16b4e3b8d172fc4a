import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the listener received, body read whole. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP listener on 127.0.0.1 that counts every connection and keeps every request. */
export interface RecordingListener {
  port: number;
  /** Connections made to it: "nothing connected" is 0. */
  connections: number;
  requests: RecordedRequest[];
  /** How the next requests are answered (default: 200, no-store). */
  answer: (res: ServerResponse) => void;
  close(): Promise<void>;
}

/** Starts a recording listener on a free loopback port (an app's back-channel endpoint, say). */
export async function startRecordingListener(): Promise<RecordingListener> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      listener.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      listener.answer(res);
    });
  });
  server.on('connection', () => (listener.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const listener: RecordingListener = {
    port: (server.address() as AddressInfo).port,
    connections: 0,
    requests: [],
    answer: (res) => res.writeHead(200, { 'cache-control': 'no-store' }).end(),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return listener;
}
