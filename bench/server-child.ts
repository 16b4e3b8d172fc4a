/**
 * Child side of a bench server process: starts the server, reports where it listens, answers the
 * parent's requests (mint authorization codes, CPU profile of a measured run), and lives until the
 * parent goes away (the IPC channel closes when the parent exits, even if it dies uncleanly).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { isServerRequest, type IdTokenAlgorithm, type MintedCode, type MintPurpose, type ServerReply, type ServerRequest, type ServerTarget } from './protocol.js';

export interface BenchServer {
  target: ServerTarget;
  /** `count` authorization codes of the app of `idTokenAlg`, each for a grant of its own. */
  mint(count: number, purpose: MintPurpose, idTokenAlg: IdTokenAlgorithm): Promise<MintedCode[]>;
}

/** V8's sampling profiler on this thread, started and stopped around a measured run only. */
class Profiler {
  private session: Session | undefined;

  async start(intervalMicros: number): Promise<void> {
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: intervalMicros });
    await this.session.post('Profiler.start');
  }

  async stop(file: string): Promise<void> {
    if (!this.session) throw new Error('the profiler was not started');
    const { profile } = await this.session.post('Profiler.stop');
    this.session.disconnect();
    this.session = undefined;
    writeFileSync(file, JSON.stringify(profile));
  }
}

async function answer(server: BenchServer, profiler: Profiler, request: ServerRequest): Promise<ServerReply> {
  switch (request.type) {
    case 'mint':
      return { type: 'minted', codes: await server.mint(request.count, request.purpose, request.idTokenAlg) };
    case 'profile-start':
      await profiler.start(request.intervalMicros);
      return { type: 'profiled', file: '' };
    case 'profile-stop':
      await profiler.stop(request.file);
      return { type: 'profiled', file: request.file };
  }
}

const describe = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

export async function serveUntilParentLeaves(start: () => Promise<BenchServer>): Promise<void> {
  if (!process.send) throw new Error('must be started by bench/run.js (fork with IPC)');
  const send = (message: ServerReply) => process.send?.(message);
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  let server: BenchServer;
  try {
    server = await start();
  } catch (error) {
    send({ type: 'failed', error: describe(error) });
    process.exitCode = 1;
    process.disconnect();
    return;
  }
  const profiler = new Profiler();
  // One request at a time: the parent waits for each answer before it asks again.
  process.on('message', (message: unknown) => {
    if (!isServerRequest(message)) return send({ type: 'failed', error: `unexpected request ${JSON.stringify(message)}` });
    answer(server, profiler, message).then(send, (error: unknown) => send({ type: 'failed', error: describe(error) }));
  });
  send({ type: 'ready', target: server.target });
}
