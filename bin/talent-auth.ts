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
});
