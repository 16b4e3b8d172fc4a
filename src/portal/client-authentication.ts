import type { Form } from '../http/forms.js';
import type { PortalKit } from './kit.js';
import type { PortalSession } from './sessions.js';
import type { PortalText } from './text.js';
import type { FieldErrors } from './views/parts.js';
import type { AppRegistrationWire, ClientAuthenticationWire } from './wire.js';

/*
 * CLIENT AUTHENTICATION ON THE PORTAL'S FORMS (client configurations and apps): the method (a
 * shared secret or private_key_jwt with public keys pasted as a JWKS or given as a URL), the DPoP
 * rule and, for apps, "Require pushed authorization requests". The API decides what is valid (a
 * private member of a key, both or neither key forms): the portal only reads the JSON it is given,
 * and says at the field when it is not JSON. A change that lowers a client's protection (DPoP or
 * PAR no longer required, private_key_jwt back to a shared secret) is done only after a recent
 * sign-in, like a change of an app's client type (src/portal/reauth.ts). So is leaving the
 * high-security profile (docs/high-security.md): the API checks what the profile requires and
 * names the setting that does not conform, which the form says at that setting's field.
 */

/** The authentication part of a form, as typed. */
export interface AuthFormValues {
  method: 'client_secret_basic' | 'private_key_jwt';
  /** The JWKS as typed (JSON). */
  jwks: string;
  jwksUri: string;
  dpop: 'optional' | 'required';
  /** Apps only. */
  requirePar: boolean;
  /** The record's own security profile. */
  profile: 'standard' | 'high-security';
}

/** The part of a new record's form. */
export const EMPTY_AUTH: AuthFormValues = { method: 'client_secret_basic', jwks: '', jwksUri: '', dpop: 'optional', requirePar: false, profile: 'standard' };

/** The largest JWKS the form takes as typed (the API takes at most 10 keys; 10 RSA-4096 keys fit). */
export const MAX_JWKS_TEXT = 32 * 1024;

/** The authentication part of a sent form, as typed. */
export function authValues(form: Form): AuthFormValues {
  return {
    method: form.get('token_endpoint_auth_method') === 'private_key_jwt' ? 'private_key_jwt' : 'client_secret_basic',
    jwks: (form.get('jwks') ?? '').slice(0, MAX_JWKS_TEXT),
    jwksUri: form.get('jwks_uri') ?? '',
    dpop: form.get('dpop') === 'required' ? 'required' : 'optional',
    requirePar: form.get('require_par') === 'on',
    profile: form.get('profile') === 'high-security' ? 'high-security' : 'standard',
  };
}

/** The authentication part of the API's record, to edit it (its public keys as indented JSON). */
export function authValuesOf(record: ClientAuthenticationWire & { require_pushed_authorization_requests?: boolean }): AuthFormValues {
  return {
    method: record.token_endpoint_auth_method === 'private_key_jwt' ? 'private_key_jwt' : 'client_secret_basic',
    jwks: record.jwks ? JSON.stringify(record.jwks, null, 2) : '',
    jwksUri: record.jwks_uri ?? '',
    dpop: record.dpop === 'required' ? 'required' : 'optional',
    requirePar: record.require_pushed_authorization_requests === true,
    profile: record.profile === 'high-security' ? 'high-security' : 'standard',
  };
}

/**
 * The API's body fields of the authentication part, or the field errors of what cannot be sent (a
 * JWKS that is not JSON). `authenticates`: false for a public app (no method, no keys); `app`: the
 * PAR rule is sent; `existing`: the record edited (a rule is sent only when it changes, so that a
 * save of other fields records no change of it).
 */
export function authBody(
  values: AuthFormValues,
  t: PortalText,
  { authenticates, app, existing }: { authenticates: boolean; app: boolean; existing?: ClientAuthenticationWire & { require_pushed_authorization_requests?: boolean } },
): { body: Record<string, unknown>; errors: FieldErrors } {
  const body: Record<string, unknown> = {};
  const errors: FieldErrors = new Map();
  if (authenticates) {
    body.token_endpoint_auth_method = values.method;
    if (values.method === 'private_key_jwt') {
      // Only the keys given: on an edit, none given keeps the keys the client has.
      if (values.jwks.trim()) {
        try {
          body.jwks = JSON.parse(values.jwks) as unknown;
        } catch {
          errors.set('auth-jwks', t.clientAuth.notJson);
        }
      }
      if (values.jwksUri.trim()) body.jwks_uri = values.jwksUri.trim();
    }
  }
  if (values.dpop !== (existing?.dpop ?? 'optional')) body.dpop = values.dpop;
  if (app && values.requirePar !== (existing?.require_pushed_authorization_requests ?? false)) body.require_pushed_authorization_requests = values.requirePar;
  // Sent for a public app too: the API refuses it there, and the form says why at the field it names.
  if (values.profile !== (existing?.profile ?? 'standard')) body.profile = values.profile;
  return { body, errors };
}

/**
 * Whether the form lowers the record's protection: DPoP no longer required, PAR no longer
 * required, a private_key_jwt client back to a shared secret (its keys dropped; a secret can
 * leak where a private key never leaves the client), or the high-security profile left (what it
 * required may then be loosened by anyone with the right, in the same save or later).
 */
export function weakens(values: AuthFormValues, record: ClientAuthenticationWire & { require_pushed_authorization_requests?: boolean }, authenticates: boolean): boolean {
  return (record.dpop === 'required' && values.dpop !== 'required')
    || (record.require_pushed_authorization_requests === true && !values.requirePar)
    || (record.token_endpoint_auth_method === 'private_key_jwt' && authenticates && values.method !== 'private_key_jwt')
    || (record.profile === 'high-security' && values.profile !== 'high-security');
}

/** The IDs of the authentication fields, by the API's field names ('' for none of them). */
export function authFieldId(field: string): string {
  const head = field.split('.')[0];
  const ids: Record<string, string> = {
    token_endpoint_auth_method: 'auth-method-client_secret_basic',
    jwks: 'auth-jwks',
    jwks_uri: 'auth-jwks-uri',
    dpop: 'auth-dpop-optional',
    require_pushed_authorization_requests: 'auth-par',
    profile: 'auth-profile-standard',
  };
  return ids[head ?? ''] ?? '';
}

/** Whether a record has a secret to regenerate (a public app or a private_key_jwt client has none). */
export function hasSecret(record: ClientAuthenticationWire & Partial<Pick<AppRegistrationWire, 'client_type'>>): boolean {
  return record.client_type !== 'public' && record.token_endpoint_auth_method !== 'private_key_jwt';
}

/**
 * The profile the tenant's settings put every client of the user's tenant under (`effective.profile`
 * of the tenant settings API: the tenant's own choice or the host's), or undefined when the API
 * does not answer it to her: the forms then say nothing about it.
 */
export async function tenantProfileOf(kit: PortalKit, session: PortalSession): Promise<'standard' | 'high-security' | undefined> {
  const answer = await kit.api.call(session, 'GET', 'tenant-settings');
  if (answer.status !== 200) return undefined;
  const effective = answer.body.effective as { profile?: unknown } | undefined;
  return effective?.profile === 'high-security' ? 'high-security' : 'standard';
}
