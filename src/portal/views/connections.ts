import { escapeHtml as e } from '../../pages/html.js';
import type { ConnectionWire } from '../connection-wire.js';
import type { Notice } from '../sessions.js';
import { csrfField, errorSummary, fieldError, header, noticeHtml, textField, type FieldErrors, type PageUser, type ViewContext } from './parts.js';

/*
 * THE "SIGN-IN PROVIDERS" PAGES of the portal (src/portal/connections.ts): the organisation's
 * identity providers listed, each with its own redirect URI to copy, the SSO rule, the security
 * profile of the organisation's clients, and the form of one.
 * The client secret is write-only: its input is a password field that is never filled in (not even
 * when the form comes back with an error), and the page says only whether one is kept.
 */

/** A connection form's values as typed (never the secret: it is not sent back to the browser). */
export interface ConnectionFormValues {
  name: string;
  issuer: string;
  clientId: string;
  method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  /** One per line. */
  domains: string;
  /** Space-separated. */
  scopes: string;
  /** `claim=provider claim`, one per line. */
  claims: string;
  signOutUpstream: boolean;
  removeSecret: boolean;
}

/** The IDs of the form's inputs, by the API's field names (`domains.1` → the domains' input). */
export function connectionFieldId(field: string): string {
  const head = field.split('.')[0] ?? '';
  const ids: Record<string, string> = {
    name: 'connection-name',
    issuer: 'connection-issuer',
    client_id: 'connection-client-id',
    client_secret: 'connection-secret',
    token_endpoint_auth_method: 'connection-method',
    domains: 'connection-domains',
    scopes: 'connection-scopes',
    claim_mapping: 'connection-claims',
    sign_out_upstream: 'connection-sign-out',
  };
  return ids[head] ?? '';
}

/** A labelled text area with its hint and error. */
function area(id: string, label: string, name: string, value: string, hint: string, errors: FieldErrors | undefined): string {
  const { attributes, message } = fieldError(id, errors, `${id}-hint`);
  return `<label for="${id}">${e(label)}</label>
<p class="hint" id="${id}-hint">${e(hint)}</p>${message}
<textarea id="${id}" name="${name}" rows="3" maxlength="4000"${attributes}>${e(value)}</textarea>`;
}

/**
 * The connection's own redirect URI, read-only and selectable, to copy into the provider's
 * settings; a new provider has none yet (it is made of the connection's id): the form says when
 * it will be shown.
 */
function redirectUriField(view: ViewContext, redirectUri: string | undefined): string {
  const { t } = view;
  if (redirectUri === undefined) {
    return `<p class="hint" id="connection-redirect-uri-later">${e(t.connections.redirectUriLater)}</p>`;
  }
  return `<label for="connection-redirect-uri">${e(t.connections.redirectUri)}</label>
<p class="hint" id="connection-redirect-uri-hint">${e(t.connections.redirectUriHint)}</p>
<input id="connection-redirect-uri" value="${e(redirectUri)}" readonly aria-describedby="connection-redirect-uri-hint">`;
}

/** A listed provider's redirect URI: read-only, selectable, named after its provider (a table cell has no label of its own). */
function listedRedirectUri(view: ViewContext, connection: ConnectionWire): string {
  return `<input class="redirect-uri" id="redirect-uri-${e(connection.id)}" value="${e(connection.redirect_uri)}" readonly aria-label="${e(view.t.connections.redirectUriOf(connection.name))}">`;
}

/** The list of the organisation's providers (each with its own redirect URI), how to set one up, the SSO rule and the tenant's security profile. */
export function connectionsPage(
  view: ViewContext,
  user: PageUser,
  notice: Notice | undefined,
  connections: readonly ConnectionWire[],
  sso: { own: 'optional' | 'required' | undefined; effective: 'optional' | 'required' } | undefined,
  profile?: { own: 'standard' | 'high-security' | undefined; effective: 'standard' | 'high-security' },
): string {
  const { t } = view;
  const rows = connections.map((connection) => `<tr>
<td>${e(connection.name)}</td>
<td><code>${e(connection.issuer)}</code></td>
<td>${connection.domains.length ? connection.domains.map((domain) => `<code>${e(domain)}</code>`).join('<br>') : `<span class="muted">${e(t.connections.noDomains)}</span>`}</td>
<td>${e(connection.has_client_secret ? t.connections.secretKept : t.connections.noSecret)}</td>
<td>${listedRedirectUri(view, connection)}</td>
<td class="actions"><a href="${view.base}/connections/${encodeURIComponent(connection.id)}" aria-label="${e(`${t.edit} ${connection.name}`)}">${e(t.edit)}</a>
<a href="${view.base}/connections/${encodeURIComponent(connection.id)}/delete" aria-label="${e(`${t.delete} ${connection.name}`)}">${e(t.delete)}</a></td>
</tr>`).join('\n');
  const table = connections.length
    ? `<table aria-labelledby="connections-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.connections.issuer)}</th><th scope="col">${e(t.connections.domains)}</th><th scope="col">${e(t.connections.secret)}</th><th scope="col">${e(t.connections.redirectUri)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`
    : `<p class="muted">${e(t.connections.none)}</p>`;
  const ssoForm = sso
    ? `<section aria-labelledby="sso-heading">
<h2 id="sso-heading">${e(t.connections.ssoHeading)}</h2>
<form method="post" action="${view.base}/connections/sso">
${csrfField(view)}
<fieldset><legend>${e(t.connections.ssoLegend)}</legend>
${(['optional', 'required'] as const).map((rule) => `<div class="check"><input type="radio" id="sso-${rule}" name="sso" value="${rule}"${(sso.own ?? 'optional') === rule ? ' checked' : ''} aria-describedby="sso-${rule}-hint"><label for="sso-${rule}">${e(t.connections.sso[rule])}</label></div>
<p class="hint" id="sso-${rule}-hint">${e(t.connections.ssoHint[rule])}</p>`).join('\n')}
</fieldset>
${sso.effective === 'required' && sso.own !== 'required' ? `<p class="warning">${e(t.connections.ssoRequiredByHost)}</p>` : ''}
<button class="primary" type="submit">${e(t.connections.ssoSave)}</button>
</form>
</section>`
    : '';
  // The tenant's security profile of its clients: the other of the tenant's settings the portal shows.
  const profileForm = profile
    ? `<section aria-labelledby="tenant-profile-heading">
<h2 id="tenant-profile-heading">${e(t.clientAuth.tenantProfileHeading)}</h2>
<form method="post" action="${view.base}/connections/profile">
${csrfField(view)}
<fieldset><legend>${e(t.clientAuth.tenantProfileLegend)}</legend>
<p class="hint" id="tenant-profile-hint">${e(t.clientAuth.tenantProfileHint)}</p>
${(['standard', 'high-security'] as const).map((choice) => `<div class="check"><input type="radio" id="tenant-profile-${choice}" name="profile" value="${choice}"${(profile.own ?? 'standard') === choice ? ' checked' : ''} aria-describedby="tenant-profile-hint"><label for="tenant-profile-${choice}">${e(t.clientAuth.tenantProfiles[choice]!)}</label></div>`).join('\n')}
</fieldset>
${profile.effective === 'high-security' && profile.own !== 'high-security' ? `<p class="warning">${e(t.clientAuth.tenantProfileByHost)}</p>` : ''}
<button class="primary" type="submit">${e(t.clientAuth.tenantProfileSave)}</button>
</form>
</section>`
    : '';
  return `${header(view, user)}
${noticeHtml(notice)}
<h2 id="connections-heading">${e(t.connections.heading)}</h2>
<p class="muted">${e(t.connections.lead)}</p>
${table}
<p><a class="button primary" href="${view.base}/connections/new">${e(t.connections.create)}</a></p>
<section aria-labelledby="connections-setup-heading">
<h2 id="connections-setup-heading">${e(t.connections.setupHeading)}</h2>
<p class="hint">${e(t.connections.setupSteps)}</p>
</section>
${ssoForm}
${profileForm}`;
}

/** The form of a connection: new (no ID) or an edit (the secret kept or not). */
export function connectionFormPage(view: ViewContext, values: ConnectionFormValues, errors: FieldErrors | undefined, existing?: { id: string; name: string; hasSecret: boolean; redirectUri: string }): string {
  const { t } = view;
  const action = existing ? `${view.base}/connections/${encodeURIComponent(existing.id)}` : `${view.base}/connections`;
  const heading = existing ? t.connections.editHeading(existing.name) : t.connections.create;
  const secret = fieldError('connection-secret', errors, 'connection-secret-hint');
  const method = fieldError('connection-method', errors);
  const signOut = fieldError('connection-sign-out', errors);
  const option = (value: ConnectionFormValues['method']) => `<option value="${value}"${values.method === value ? ' selected' : ''}>${e(t.connections.methods[value])}</option>`;
  return `<p><a href="${view.base}/connections">${e(t.connections.back)}</a></p>
<h1 id="form-heading">${e(heading)}</h1>
<form method="post" action="${action}" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
${errorSummary(view, errors)}
${textField('connection-name', t.name, 'name', values.name, errors, { required: true, hint: t.connections.nameHint, max: 100 })}
${textField('connection-issuer', t.connections.issuer, 'issuer', values.issuer, errors, { required: true, hint: t.connections.issuerHint, max: 2000, placeholder: 'https://login.example.com' })}
${redirectUriField(view, existing?.redirectUri)}
${textField('connection-client-id', t.clientId, 'client_id', values.clientId, errors, { required: true, hint: t.connections.clientIdHint, max: 512 })}
<label for="connection-secret">${e(t.connections.secret)}</label>
<p class="hint" id="connection-secret-hint">${e(existing ? (existing.hasSecret ? t.connections.secretReplaceHint : t.connections.secretAddHint) : t.connections.secretHint)}</p>${secret.message}
<input id="connection-secret" name="client_secret" type="password" value="" autocomplete="new-password" maxlength="1024"${secret.attributes}>
${existing?.hasSecret ? `<div class="check"><input type="checkbox" id="connection-remove-secret" name="remove_secret" value="on"${values.removeSecret ? ' checked' : ''}><label for="connection-remove-secret">${e(t.connections.removeSecret)}</label></div>` : ''}
<label for="connection-method">${e(t.connections.method)}</label>${method.message}
<select id="connection-method" name="token_endpoint_auth_method"${method.attributes}>
${option('client_secret_basic')}
${option('client_secret_post')}
${option('private_key_jwt')}
</select>
${area('connection-domains', t.connections.domains, 'domains', values.domains, t.connections.domainsHint, errors)}
${textField('connection-scopes', `${t.connections.scopes} ${t.optional}`, 'scopes', values.scopes, errors, { hint: t.connections.scopesHint, max: 2000 })}
${area('connection-claims', `${t.connections.claims} ${t.optional}`, 'claims', values.claims, t.connections.claimsHint, errors)}
<div class="check"><input type="checkbox" id="connection-sign-out" name="sign_out_upstream" value="on"${values.signOutUpstream ? ' checked' : ''}${signOut.attributes}><label for="connection-sign-out">${e(t.connections.signOutUpstream)}</label></div>${signOut.message}
<button class="primary" type="submit">${e(existing ? t.connections.save : t.connections.create)}</button>
<a class="button secondary" href="${view.base}/connections">${e(t.cancel)}</a>
</form>`;
}
