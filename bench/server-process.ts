/** Parent side of a bench server process: fork, wait until it listens, ask it for codes and profiles. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isServerReply, type IdTokenAlgorithm, type MintedCode, type MintPurpose, type ServerReply, type ServerRequest, type ServerTarget } from './protocol.js';

const START_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 5_000;
const KEPT_OUTPUT_CHARS = 16_000;

export interface ServerProcess {
  target: ServerTarget;
  pid: number;
  /** Authorization codes of the app of `idTokenAlg` (default RS256), minted in the server (outside any measured run). */
  mint(count: number, purpose?: MintPurpose, idTokenAlg?: IdTokenAlgorithm): Promise<MintedCode[]>;
  /** Starts V8's sampling profiler in the server. */
  startProfile(intervalMicros: number): Promise<void>;
  /** Stops it and writes the .cpuprofile to `file`. */
  stopProfile(file: string): Promise<void>;
  /** The tail of what the process wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function captureOutput(child: ChildProcess): () => string {
  let kept = '';
  const keep = (chunk: Buffer) => {
    kept = (kept + chunk.toString('utf8')).slice(-KEPT_OUTPUT_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => kept;
}

/** The next reply of the child (requests are one at a time), or a failure that quotes its output. */
function nextReply(child: ChildProcess, output: () => string, timeoutMs: number, what: string): Promise<ServerReply> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      cleanup();
      const tail = output().trim();
      reject(new Error(tail ? `${reason}\n--- server output ---\n${tail}` : reason));
    };
    const onMessage = (message: unknown) => {
      if (!isServerReply(message)) return fail(`unexpected message ${JSON.stringify(message).slice(0, 300)}`);
      if (message.type === 'failed') return fail(`server failed (${what}): ${message.error}`);
      cleanup();
      resolve(message);
    };
    const onExit = (code: number | null, signal: string | null) => fail(`server exited (${what}; code ${code}, signal ${signal})`);
    const onError = (error: Error) => fail(`server process error: ${error.message}`);
    const timer = setTimeout(() => fail(`no answer from the server within ${timeoutMs / 1000} s (${what})`), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage).off('exit', onExit).off('error', onError);
    };
    child.on('message', onMessage).on('exit', onExit).on('error', onError);
  });
}

/** Forks one of the bench server scripts (next to this file) and waits until it listens. */
export async function startServerProcess(script: string, args: string[], env: Record<string, string>): Promise<ServerProcess> {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ...env },
  });
  const output = captureOutput(child);
  const ask = async (request: ServerRequest, expected: ServerReply['type']): Promise<ServerReply> => {
    const reply = nextReply(child, output, REQUEST_TIMEOUT_MS, request.type);
    child.send(request);
    const answer = await reply;
    if (answer.type !== expected) throw new Error(`server answered ${answer.type} to ${request.type}`);
    return answer;
  };
  try {
    const ready = await nextReply(child, output, START_TIMEOUT_MS, 'start');
    if (ready.type !== 'ready') throw new Error(`server sent ${ready.type} before it was ready`);
    return {
      target: ready.target,
      pid: child.pid!,
      async mint(count, purpose = 'exchange', idTokenAlg = 'RS256') {
        const reply = await ask({ type: 'mint', count, purpose, idTokenAlg }, 'minted');
        return reply.type === 'minted' ? reply.codes : [];
      },
      async startProfile(intervalMicros) {
        await ask({ type: 'profile-start', intervalMicros }, 'profiled');
      },
      async stopProfile(file) {
        await ask({ type: 'profile-stop', file }, 'profiled');
      },
      output,
      stop: () => terminate(child),
    };
  } catch (error) {
    await terminate(child);
    throw error;
  }
}
