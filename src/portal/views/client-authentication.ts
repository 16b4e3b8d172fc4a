import { clientKeyIds } from '../../../policies/client-key-ids.js';
import { escapeHtml as e } from '../../pages/html.js';
import type { AuthFormValues } from '../client-authentication.js';
import type { ClientAuthenticationWire } from '../wire.js';
import { fieldError, textField, type FieldErrors, type ViewContext } from './parts.js';
import { MAX_JWKS_TEXT } from '../client-authentication.js';

/**
 * What a record has now: its method, and its keys by ID and thumbprint (never their members) or
 * the URL they are fetched from. A public app has none.
 */
export function currentAuthentication(view: ViewContext, record: ClientAuthenticationWire & { client_type?: 'public' | 'confidential' }): string {
  const { t } = view;
  if (record.client_type === 'public') return `<p id="auth-current">${e(t.clientAuth.currentPublic)}</p>`;
  if (record.token_endpoint_auth_method !== 'private_key_jwt') return `<p id="auth-current">${e(t.clientAuth.currentSecret)}</p>`;
  const keys = record.jwks
    ? `<ul aria-labelledby="auth-current">${clientKeyIds(record.jwks).map((key) =>
      `<li>${e(key.kid !== undefined ? t.clientAuth.key(key.kid, key.alg ?? key.kty) : t.clientAuth.keyWithoutId(key.alg ?? key.kty))} <code>${e(key.thumbprint)}</code></li>`).join('')}</ul>`
    : `<p>${e(t.clientAuth.keysAt)} <code>${e(record.jwks_uri ?? '')}</code></p>`;
  return `<p id="auth-current">${e(t.clientAuth.currentKeys)}</p>\n${keys}`;
}

/**
 * The security profile's choice, with what high security requires of this kind of record; what the
 * record has now when it is high-security, and when the tenant's profile puts every client under
 * it (its effective profile, whatever the record's own says).
 */
function profileFields(view: ViewContext, values: AuthFormValues, errors: FieldErrors | undefined, { app, existing, tenantProfile }: { app: boolean; existing?: ClientAuthenticationWire | undefined; tenantProfile?: 'standard' | 'high-security' | undefined }): string {
  const { t } = view;
  const profileError = fieldError('auth-profile-standard', errors, 'auth-profile-hint');
  const choice = (value: AuthFormValues['profile'], label: string) =>
    `<div class="check"><input type="radio" id="auth-profile-${value}" name="profile" value="${value}"${values.profile === value ? ' checked' : ''}${profileError.attributes}><label for="auth-profile-${value}">${e(label)}</label></div>`;
  const now = existing?.profile === 'high-security' ? `<p id="auth-profile-current">${e(t.clientAuth.profileNow)}</p>\n` : '';
  const tenant = tenantProfile === 'high-security' ? `<p class="warning" id="auth-profile-tenant">${e(t.clientAuth.profileByTenant)}</p>\n` : '';
  return `<fieldset><legend>${e(t.clientAuth.profile)}</legend>
<p class="hint" id="auth-profile-hint">${e(app ? t.clientAuth.profileHintApp : t.clientAuth.profileHint)}</p>
${now}${tenant}${profileError.message}
${choice('standard', t.clientAuth.profileStandard)}
${choice('high-security', t.clientAuth.profileHigh)}
</fieldset>`;
}

/**
 * The fields of how a client authenticates (`app`: with the note that a public app does not, and
 * the PAR rule), its DPoP rule, its security profile (`tenantProfile`: what the tenant's settings
 * put every client under, when known), and (an edit) what it has now.
 */
export function authFields(
  view: ViewContext,
  values: AuthFormValues,
  errors: FieldErrors | undefined,
  { app, existing, tenantProfile }: { app: boolean; existing?: ClientAuthenticationWire & { client_type?: 'public' | 'confidential' }; tenantProfile?: 'standard' | 'high-security' | undefined },
): string {
  const { t } = view;
  const methodError = fieldError('auth-method-client_secret_basic', errors, 'auth-hint');
  const method = (value: AuthFormValues['method'], label: string) =>
    `<div class="check"><input type="radio" id="auth-method-${value}" name="token_endpoint_auth_method" value="${value}"${values.method === value ? ' checked' : ''}${methodError.attributes}><label for="auth-method-${value}">${e(label)}</label></div>`;
  const jwksError = fieldError('auth-jwks', errors, 'auth-jwks-hint');
  const dpopError = fieldError('auth-dpop-optional', errors);
  const dpop = (value: AuthFormValues['dpop'], label: string) =>
    `<div class="check"><input type="radio" id="auth-dpop-${value}" name="dpop" value="${value}"${values.dpop === value ? ' checked' : ''}${dpopError.attributes}><label for="auth-dpop-${value}">${e(label)}</label></div>`;
  const parError = fieldError('auth-par', errors, 'auth-par-hint');
  return `<fieldset><legend>${e(t.clientAuth.heading)}</legend>
<p class="hint" id="auth-hint">${e(app ? `${t.clientAuth.lead} ${t.clientAuth.appOnly}` : t.clientAuth.lead)}</p>
${existing ? currentAuthentication(view, existing) : ''}${methodError.message}
${method('client_secret_basic', t.clientAuth.secret)}
${method('private_key_jwt', t.clientAuth.privateKeyJwt)}
<label for="auth-jwks">${e(t.clientAuth.jwks)}</label>
<p class="hint" id="auth-jwks-hint">${e(t.clientAuth.jwksHint)}</p>${jwksError.message}
<textarea id="auth-jwks" name="jwks" rows="6" maxlength="${MAX_JWKS_TEXT}" spellcheck="false" autocomplete="off"${jwksError.attributes}>${e(values.jwks)}</textarea>
${textField('auth-jwks-uri', t.clientAuth.jwksUri, 'jwks_uri', values.jwksUri, errors, { hint: t.clientAuth.jwksUriHint, max: 2000 })}
</fieldset>
<fieldset><legend>${e(t.clientAuth.dpop)}</legend>
<p class="hint" id="auth-dpop-hint">${e(t.clientAuth.dpopHint)}</p>${dpopError.message}
${dpop('optional', t.clientAuth.dpopOptional)}
${dpop('required', t.clientAuth.dpopRequired)}
</fieldset>
${app ? `<div class="check"><input type="checkbox" id="auth-par" name="require_par" value="on"${values.requirePar ? ' checked' : ''}${parError.attributes}><label for="auth-par">${e(t.clientAuth.par)}</label></div>
<p class="hint" id="auth-par-hint">${e(t.clientAuth.parHint)}</p>${parError.message}
` : ''}${profileFields(view, values, errors, { app, existing, tenantProfile })}
${existing ? `<p class="hint warning">${e(t.clientAuth.weakenNote)}</p>\n` : ''}`;
}
