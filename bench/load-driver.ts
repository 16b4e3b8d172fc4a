/** Parent side of a load generator process (bench/load-process.ts): one per server process. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import type { JWK } from 'jose';
import type { IdTokenAlgorithm, MintedCode, ServerTarget } from './protocol.js';
import type { Workload } from './workloads.js';

export type LoadRequest =
  | { type: 'init'; target: ServerTarget; connections: number; clientKey: JWK }
  | { type: 'set-codes'; codes: MintedCode[] }
  | { type: 'set-access-tokens'; tokens: string[] }
  | { type: 'run'; workload: Workload; seconds: number; idTokenAlg: IdTokenAlgorithm };

/**
 * `raw` is autocannon's un-aggregated result (histograms encoded), merged by the parent;
 * `unexpected`, its 2xx answers that did not say what the workload expects (bench/workloads.ts).
 */
export type LoadReply =
  | { type: 'ok' }
  | { type: 'ran'; raw: autocannon.Result; unexpected: number; codesLeft: number; refreshTokensLeft: number }
  | { type: 'failed'; error: string };

export interface LoadDriver {
  pid: number;
  /** Replaces the pool of codes (left-overs of an earlier run may be near their expiry): the next code exchange's. */
  setCodes(codes: MintedCode[]): Promise<void>;
  /** Replaces the pool of live access tokens (userinfo, introspection), taken in turn. */
  setAccessTokens(tokens: string[]): Promise<void>;
  /** `idTokenAlg`: whose app's codes and refresh tokens the named-user workloads send (default RS256). */
  run(workload: Workload, seconds: number, idTokenAlg?: IdTokenAlgorithm): Promise<Extract<LoadReply, { type: 'ran' }>>;
  stop(): void;
}

/** Seconds a run may overrun its duration before the driver gives up on it. */
const RUN_GRACE_SECONDS = 30;

function nextReply(child: ChildProcess, timeoutMs: number): Promise<LoadReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: LoadReply) => {
      cleanup();
      if (reply.type === 'failed') reject(new Error(`load generator failed: ${reply.error}`));
      else resolve(reply);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`load generator exited (code ${code})`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error('load generator did not answer in time'));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage).off('exit', onExit);
    };
    child.on('message', onMessage).on('exit', onExit);
  });
}

/** `clientKey`: the bench client's private key, which signs the client-authentication workloads' assertions and proofs. */
export async function startLoadDriver(target: ServerTarget, connections: number, clientKey: JWK): Promise<LoadDriver> {
  const child = fork(fileURLToPath(new URL('./load-process.js', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = async (request: LoadRequest, timeoutMs = 30_000): Promise<LoadReply> => {
    const reply = nextReply(child, timeoutMs);
    child.send(request);
    return reply;
  };
  await nextReply(child, 30_000);
  await ask({ type: 'init', target, connections, clientKey });
  return {
    pid: child.pid!,
    async setCodes(codes) {
      await ask({ type: 'set-codes', codes });
    },
    async setAccessTokens(tokens) {
      await ask({ type: 'set-access-tokens', tokens });
    },
    async run(workload, seconds, idTokenAlg = 'RS256') {
      const reply = await ask({ type: 'run', workload, seconds, idTokenAlg }, (seconds + RUN_GRACE_SECONDS) * 1000);
      if (reply.type !== 'ran') throw new Error(`load generator answered ${reply.type} to run`);
      return reply;
    },
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
