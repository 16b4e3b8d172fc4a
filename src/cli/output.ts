import type { Resources } from '../records/client-configurations.js';

/** Where a command writes: stdout for results, stderr for errors and warnings. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Standard input, whole, as UTF-8 (a secret piped in); undefined when it holds more than `maxBytes`. Absent: none to read. */
  stdin?: (maxBytes: number) => Promise<string | undefined>;
}

/* --json speaks the wire's snake_case names, like the HTTP APIs: one mapping for both. */
export { appWire, clientWire } from '../http/wire.js';

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Record fields are free text: never let them drive the operator's terminal (escape sequences) nor
 * reorder or hide what it shows (bidirectional overrides, zero-width characters): every character
 * that policies/display-text.ts refuses is printed as its code point, `\u{202e}`. Records stored
 * before that rule may still hold one.
 */
export function safe(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** `scim: scim.read, scim.write [group=eng|ops]; subscriptions: manage.subscriptions` */
export function resourcesInWords(resources: Resources): string {
  return Object.entries(resources)
    .map(([apiId, { scopes, constraints }]) => {
      const filters = Object.entries(constraints ?? {}).map(([dimension, values]) => `${dimension}=${values.join('|')}`);
      return `${apiId}: ${scopes.join(', ')}${filters.length ? ` [${filters.join(' ')}]` : ''}`;
    })
    .join('; ');
}

export const SECRET_NOTE = 'The secret is shown only now and cannot be read back: store it safely.';
