import type { ClientJwks } from '../../policies/client-keys.js';

/*
 * What the management and consent APIs answer, as the portal reads it (the wire schema,
 * src/http/wire.ts, is the APIs' own statement of it).
 */

/** How a client authenticates and binds its tokens, as the management API gives it (both record kinds). */
export interface ClientAuthenticationWire {
  /** Absent for a public app (and in answers older than the field: Basic). */
  token_endpoint_auth_method?: 'client_secret_basic' | 'private_key_jwt';
  jwks?: ClientJwks;
  jwks_uri?: string;
  /** Absent: optional. */
  dpop?: 'required' | 'optional';
  /** The record's own security profile (docs/high-security.md); answered only when high-security. */
  profile?: 'standard' | 'high-security';
}

/** A client configuration as the management API gives it. */
export interface ClientConfigurationWire extends ClientAuthenticationWire {
  client_id: string;
  name: string;
  category: string;
  description?: string;
  resources: Record<string, { scopes: string[]; constraints?: Record<string, string[]> }>;
}

/** An app registration as the management API gives it. */
export interface AppRegistrationWire extends ClientAuthenticationWire {
  client_id: string;
  name: string;
  description?: string;
  redirect_uris: string[];
  client_type: 'public' | 'confidential';
  pkce_enabled: boolean;
  post_logout_redirect_uris: string[];
  backchannel_logout_uri?: string;
  /** Absent in answers older than the field: false. */
  require_pushed_authorization_requests?: boolean;
}

/** A consent as the consent API gives it. */
export interface ConsentWire {
  client_id: string;
  app_name: string | null;
  scopes: Array<{ scope: string; description: string; api?: string }>;
  updated_at: string;
}

/** An audit event as the management API gives it. */
export interface AuditEventWire {
  time: string;
  type: string;
  actor: { type: string; id?: string };
  target?: { type: string; id: string };
  address?: string;
  details?: Record<string, unknown>;
}

/** An app that serves the organisation besides its own, as the management API gives it. */
export interface PlatformAppWire {
  client_id: string;
  name: string;
  description?: string;
  client_type: 'public' | 'confidential';
  first_party: boolean;
  registered_by: 'platform' | 'another_tenant';
  redirect_uris: string[];
}
