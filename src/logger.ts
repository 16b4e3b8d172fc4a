/**
 * Where the server reports what an operator must know. Messages never contain secrets, codes or
 * tokens (spec, security rule 2); fields are plain identifiers such as a client ID.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function line(level: string, message: string, fields?: Record<string, unknown>): string {
  return JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...fields });
}

/** One JSON line per event on stderr. */
export const consoleLogger: Logger = {
  info: (message, fields) => process.stderr.write(`${line('info', message, fields)}\n`),
  warn: (message, fields) => process.stderr.write(`${line('warn', message, fields)}\n`),
  error: (message, fields) => process.stderr.write(`${line('error', message, fields)}\n`),
};
