import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createLogger, fromPino, REDACTED_FIELDS } from '../src/logger.js';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('logger (pino)', () => {
  it('writes one JSON line per event with level, time, name, message and fields', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ destination: stream });
    logger.warn('client authentication failed', { client_id: 'c-1', address: '127.0.0.1' });
    const [line] = lines();
    expect(line).toMatchObject({ level: 40, name: 'talent-auth', msg: 'client authentication failed', client_id: 'c-1', address: '127.0.0.1' });
    expect(typeof line!.time).toBe('number');
  });

  it('redacts every sensitive field name, at the top level and one level down', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ destination: stream });
    const fields = Object.fromEntries(REDACTED_FIELDS.map((field) => [field, `SECRET-${field}`]));
    logger.error('oops', { ...fields, nested: { ...fields } });
    const text = JSON.stringify(lines());
    expect(text).not.toContain('SECRET-');
    expect(lines()[0]!.client_secret).toBe('[redacted]');
    expect((lines()[0]!.nested as Record<string, unknown>).code_verifier).toBe('[redacted]');
  });

  it('respects the level', () => {
    const { stream, lines } = capture();
    createLogger({ destination: stream, level: 'warn' }).info('hidden');
    createLogger({ destination: stream, level: 'warn' }).warn('shown');
    expect(lines().map((line) => line.msg)).toEqual(['shown']);
  });

  it("logs into a host's pino logger as a child, with our redaction added", () => {
    const { stream, lines } = capture();
    const host = pino({ base: { app: 'host' } }, stream);
    fromPino(host).info('token issued', { client_id: 'c-2', refresh_token: 'rt-secret' });
    expect(lines()[0]).toMatchObject({ app: 'host', name: 'talent-auth', client_id: 'c-2', refresh_token: '[redacted]' });
  });
});
