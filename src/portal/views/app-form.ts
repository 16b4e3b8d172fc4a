import { escapeHtml as e } from '../../pages/html.js';
import { authFieldId } from '../client-authentication.js';
import { csrfField, errorSummary, fieldError, textArea, textField, type FieldErrors, type ViewContext } from './parts.js';

/** An app form's values as typed. */
export interface AppFormValues {
  name: string;
  description: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string;
  clientType: 'public' | 'confidential';
  pkceEnabled: boolean;
}

/** The IDs of the app form's fields, by the API's field names (URI lists by their input's index). */
export function appFieldId(field: string, inputIndex: (list: 'redirect' | 'logout', sent: number) => number): string {
  const [head, index] = field.split('.');
  if (head === 'redirect_uris') return index === undefined ? 'redirect-0' : `redirect-${inputIndex('redirect', Number(index))}`;
  if (head === 'post_logout_redirect_uris') return index === undefined ? 'logout-0' : `logout-${inputIndex('logout', Number(index))}`;
  const ids: Record<string, string> = {
    name: 'app-name', description: 'app-description', client_type: 'type-confidential', pkce_enabled: 'app-pkce', backchannel_logout_uri: 'app-backchannel',
  };
  return ids[head ?? ''] ?? authFieldId(field);
}

/** A list of URI inputs (redirect or post-logout), each with its error, and its "Add another" button. */
function uriList(view: ViewContext, list: 'redirect' | 'logout', uris: string[], errors: FieldErrors | undefined): string {
  const { t } = view;
  const name = list === 'redirect' ? 'redirect_uri' : 'post_logout_redirect_uri';
  const label = list === 'redirect' ? t.apps.redirectUri : t.apps.postLogoutUri;
  const hintId = `${list}-hint`;
  const fields = uris.map((uri, index) => {
    const id = `${list}-${index}`;
    const { attributes, message } = fieldError(id, errors, hintId);
    return `<label for="${id}">${e(label(index + 1))}</label>${message}
<input id="${id}" name="${name}" value="${e(uri)}" maxlength="2000" inputmode="url"${attributes}>`;
  }).join('\n');
  return `<fieldset><legend>${e(list === 'redirect' ? t.apps.redirectUris : t.apps.postLogoutUris)}</legend>
<p class="hint" id="${hintId}">${e(list === 'redirect' ? t.apps.redirectHint : t.apps.postLogoutHint)}</p>
${fields}
<button class="secondary" type="submit" name="more" value="${list}">${e(list === 'redirect' ? t.apps.addRedirectUri : t.apps.addPostLogoutUri)}</button>
</fieldset>`;
}

/**
 * The form of an app registration: new (no ID) or an edit (with the type change's consequences);
 * `auth`: its authentication, DPoP and PAR fields (views/client-authentication.ts).
 */
export function appFormPage(view: ViewContext, values: AppFormValues, errors: FieldErrors | undefined, existing?: { clientId: string; name: string }, auth = ''): string {
  const { t } = view;
  const action = existing ? `${view.base}/app-registrations/${encodeURIComponent(existing.clientId)}` : `${view.base}/app-registrations`;
  const heading = existing ? t.apps.editHeading(existing.name) : t.apps.create;
  const typeError = fieldError('type-confidential', errors, existing ? 'type-warning' : undefined);
  const pkceError = fieldError('app-pkce', errors, 'app-pkce-hint');
  const radio = (type: 'confidential' | 'public') =>
    `<div class="check"><input type="radio" id="type-${type}" name="client_type" value="${type}"${values.clientType === type ? ' checked' : ''}${typeError.attributes}><label for="type-${type}">${e(t.apps[type])}</label></div>`;
  return `<p><a href="${view.base}">${e(t.back)}</a></p>
<h1 id="form-heading">${e(heading)}</h1>
<form method="post" action="${action}" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
<button class="default-submit" type="submit" name="save" value="1" tabindex="-1" aria-hidden="true">${e(existing ? t.apps.save : t.apps.create)}</button>
${errorSummary(view, errors)}
${textField('app-name', t.name, 'name', values.name, errors, { required: true })}
${textArea('app-description', `${t.description} ${t.optional}`, 'description', values.description, errors)}
${uriList(view, 'redirect', values.redirectUris, errors)}
<fieldset><legend>${e(t.apps.type)}</legend>
${existing ? `<p class="warning" id="type-warning">${e(t.apps.typeChangeWarning)}</p>` : ''}${typeError.message}
${radio('confidential')}
${radio('public')}
</fieldset>
<div class="check"><input type="checkbox" id="app-pkce" name="pkce_enabled" value="on"${values.pkceEnabled ? ' checked' : ''}${pkceError.attributes}><label for="app-pkce">${e(t.apps.pkce)}</label></div>
<p class="hint warning" id="app-pkce-hint">${e(t.apps.pkceHint)}</p>${pkceError.message}
${uriList(view, 'logout', values.postLogoutRedirectUris, errors)}
${textField('app-backchannel', t.apps.backchannel, 'backchannel_logout_uri', values.backchannelLogoutUri, errors, { hint: t.apps.backchannelHint, max: 2000 })}
${auth}<button class="primary" type="submit" name="save" value="1">${e(existing ? t.apps.save : t.apps.create)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}
