#!/usr/bin/env node
/**
 * The operator CLI: `npx talent-auth <group> <command> [options]` (see `talent-auth --help`).
 * Works on the Redis store directly with the server's own record services; no HTTP server needed.
 */
import { main } from '../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  // Read only by a command that asks (`--client-secret-stdin`), and only up to its limit.
  stdin: async (maxBytes) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) return undefined;
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  },
});
