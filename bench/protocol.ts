/** What the parent and the two server processes say to each other over the fork IPC channel. */

export const ALGORITHMS = ['ES256', 'RS256'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** Where and how to ask for a client_credentials token. */
export interface TokenTarget {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
}

export type ChildMessage = { type: 'ready'; target: TokenTarget } | { type: 'failed'; error: string };

export function parseAlgorithm(value: string | undefined): Algorithm {
  const found = ALGORITHMS.find((alg) => alg === value);
  if (!found) throw new Error(`expected an algorithm (${ALGORITHMS.join(', ')}), got ${String(value)}`);
  return found;
}

export function isChildMessage(value: unknown): value is ChildMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as Record<string, unknown>;
  if (message.type === 'failed') return typeof message.error === 'string';
  if (message.type !== 'ready' || typeof message.target !== 'object' || message.target === null) return false;
  const target = message.target as Record<string, unknown>;
  return ['tokenUrl', 'clientId', 'clientSecret'].every((field) => typeof target[field] === 'string');
}

/**
 * Child side: starts the server, reports where it listens, and lives until the parent goes away
 * (the IPC channel closes when the parent exits, even if it dies without cleaning up).
 */
export async function serveUntilParentLeaves(start: () => Promise<TokenTarget>): Promise<void> {
  if (!process.send) throw new Error('must be started by bench/run.js (fork with IPC)');
  const send = (message: ChildMessage) => process.send?.(message);
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  try {
    send({ type: 'ready', target: await start() });
  } catch (error) {
    send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exitCode = 1;
    process.disconnect();
  }
}
