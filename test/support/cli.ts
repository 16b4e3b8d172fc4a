import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The built CLI (`npm run build`, which the test command runs before jest). */
export const CLI_ENTRY = join(process.cwd(), 'dist/bin/talent-auth.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as JSON (for --json runs), undefined when it is not JSON. */
  json: any;
}

/** Runs `node dist/bin/talent-auth.js ...args` in `cwd` with exactly `env` (and `input` on its standard input, else none). */
export function runCli(args: string[], cwd: string, env: Record<string, string | undefined>, input?: string): Promise<CliRun> {
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) childEnv[name] = value;
  // Standard input: `input`, else nothing (at its end at once, as /dev/null would be).
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input ?? '');
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

/**
 * The CLI in process (bin/talent-auth.ts minus the process) with `--json`, in the directory
 * `cwd()` names when called: its parsed answer, or an error with its standard error.
 */
export function cliInProcess(cwd: () => string): (...args: string[]) => Promise<any> {
  return async (...args) => {
    const { main } = await import('../../src/cli/main.js');
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text), env: {}, cwd: cwd() };
    const code = await main([...args, '--json'], io);
    if (code !== 0) throw new Error(`talent-auth ${args.join(' ')} exited ${code}: ${stderr}`);
    return JSON.parse(stdout);
  };
}
