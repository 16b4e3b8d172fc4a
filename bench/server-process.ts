import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isChildMessage, type TokenTarget } from './protocol.js';

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const KEPT_OUTPUT_CHARS = 16_000;

export interface ServerProcess {
  target: TokenTarget;
  pid: number;
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

function waitForReady(child: ChildProcess, output: () => string): Promise<TokenTarget> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      cleanup();
      const tail = output().trim();
      reject(new Error(tail ? `${reason}\n--- server output ---\n${tail}` : reason));
    };
    const onMessage = (message: unknown) => {
      if (!isChildMessage(message)) return fail(`unexpected message ${JSON.stringify(message)}`);
      if (message.type === 'failed') return fail(`server failed to start: ${message.error}`);
      cleanup();
      resolve(message.target);
    };
    const onExit = (code: number | null, signal: string | null) => fail(`server exited before it was ready (code ${code}, signal ${signal})`);
    const onError = (error: Error) => fail(`server process error: ${error.message}`);
    const timer = setTimeout(() => fail(`server not ready within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage).off('exit', onExit).off('error', onError);
    };
    child.on('message', onMessage).on('exit', onExit).on('error', onError);
  });
}

/** Forks one of the bench server scripts (next to this file) and waits until it listens. */
export async function startServerProcess(script: string, args: string[]): Promise<ServerProcess> {
  // BENCH_CPU_PROF=dir writes a V8 CPU profile of each server child there (node --cpu-prof).
  const profileDir = process.env.BENCH_CPU_PROF;
  const execArgv = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv });
  const output = captureOutput(child);
  try {
    const target = await waitForReady(child, output);
    return { target, pid: child.pid!, output, stop: () => terminate(child) };
  } catch (error) {
    await terminate(child);
    throw error;
  }
}
