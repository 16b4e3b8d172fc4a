export { demoApis } from '../../examples/demo-data.js';

/** A logger that keeps what it was told, for assertions. */
export function capturingLogger() {
  const lines: string[] = [];
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push(JSON.stringify({ level, message, ...fields }));
  };
  return { lines, logger: { info: record('info'), warn: record('warn'), error: record('error') } };
}
