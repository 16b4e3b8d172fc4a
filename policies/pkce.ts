import { createHash } from 'node:crypto';

/**
 * When an authorization request must carry a PKCE challenge (spec, "Client types and PKCE"):
 * always for public apps (they authenticate with `none`), and for confidential apps unless their
 * registration turned PKCE off. Synchronous: the engine calls it as `pkce.required(ctx, client)`.
 */
export function pkceRequired(client: { clientAuthMethod: string; pkce_enabled?: unknown }): boolean {
  return client.clientAuthMethod === 'none' || client.pkce_enabled !== false;
}

/** RFC 7636 §4.2: code_challenge = BASE64URL(SHA256(ASCII(code_verifier))), method S256 only. */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
