import type { AppRegistration } from '../records/app-registrations.js';
import type { ClientConfiguration, Resources } from '../records/client-configurations.js';

/** Where a command writes: stdout for results, stderr for errors and warnings. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
}

type Wire = Record<string, unknown>;

/* --json speaks the wire's snake_case names, like the HTTP APIs. */

export function clientWire(client: ClientConfiguration & { clientSecret?: string }): Wire {
  return {
    client_id: client.clientId,
    tenant: client.tenant,
    name: client.name,
    category: client.category,
    ...(client.description ? { description: client.description } : {}),
    resources: client.resources,
    created_at: client.createdAt,
    updated_at: client.updatedAt,
    ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
  };
}

export function appWire(app: AppRegistration & { clientSecret?: string }): Wire {
  const { tenant } = app as { tenant?: unknown };
  return {
    client_id: app.clientId,
    name: app.name,
    ...(app.description ? { description: app.description } : {}),
    ...(typeof tenant === 'string' ? { tenant } : {}),
    redirect_uris: app.redirectUris,
    client_type: app.clientType,
    pkce_enabled: app.pkceEnabled,
    id_token_signed_response_alg: app.idTokenSigningAlg,
    first_party: app.firstParty,
    created_at: app.createdAt,
    updated_at: app.updatedAt,
    ...(app.clientSecret ? { client_secret: app.clientSecret } : {}),
  };
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Record fields are free text: never let them drive the operator's terminal (escape sequences). */
export function safe(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
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
