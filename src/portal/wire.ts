/*
 * What the management and consent APIs answer, as the portal reads it (the wire schema,
 * src/http/wire.ts, is the APIs' own statement of it).
 */

/** A client configuration as the management API gives it. */
export interface ClientConfigurationWire {
  client_id: string;
  name: string;
  category: string;
  description?: string;
  resources: Record<string, { scopes: string[]; constraints?: Record<string, string[]> }>;
}

/** An app registration as the management API gives it. */
export interface AppRegistrationWire {
  client_id: string;
  name: string;
  description?: string;
  redirect_uris: string[];
  client_type: 'public' | 'confidential';
  pkce_enabled: boolean;
  post_logout_redirect_uris: string[];
  backchannel_logout_uri?: string;
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
