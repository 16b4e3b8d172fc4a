import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';

/**
 * Where the server reports what an operator must know. Messages never contain secrets, codes or
 * tokens (whoever reads the logs must not be able to act as a client or a user); fields are plain
 * identifiers such as a client ID.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Field names whose values are never written, at the top level or one level down. Callers pass
 * identifiers only; this is the net under that rule, should a request field ever slip into a log.
 */
export const REDACTED_FIELDS: readonly string[] = [
  'authorization', 'cookie', 'set-cookie', 'password', 'secret', 'client_secret', 'clientSecret',
  'code', 'code_verifier', 'codeVerifier', 'access_token', 'accessToken', 'refresh_token',
  'refreshToken', 'id_token', 'idToken', 'token', 'assertion', 'body', 'query', 'headers',
];

const redact: NonNullable<LoggerOptions['redact']> = {
  paths: REDACTED_FIELDS.flatMap((field) => [`["${field}"]`, `*["${field}"]`]),
  censor: '[redacted]',
};

function wrap(instance: PinoLogger): Logger {
  return {
    info: (message, fields) => instance.info(fields ?? {}, message),
    warn: (message, fields) => instance.warn(fields ?? {}, message),
    error: (message, fields) => instance.error(fields ?? {}, message),
  };
}

/**
 * Structured JSON lines (pino) with redaction; by default to stderr. `destination` is any stream
 * pino accepts (a file, a transport, a test's capture).
 */
export function createLogger(settings: { level?: string; destination?: DestinationStream } = {}): Logger {
  const options: LoggerOptions = { level: settings.level ?? 'info', base: { name: 'talent-auth' }, redact };
  return wrap(pino(options, settings.destination ?? pino.destination({ dest: 2, sync: true })));
}

/** Logs into a host's own pino logger (as a child named talent-auth), with our redaction added. */
export function fromPino(instance: PinoLogger): Logger {
  return wrap(instance.child({ name: 'talent-auth' }, { redact }));
}
