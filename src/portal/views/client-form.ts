import type { ApiDefinition } from '../../../policies/catalog.js';
import { escapeHtml as e } from '../../pages/html.js';
import { authFieldId } from '../client-authentication.js';
import { csrfField, errorSummary, fieldError, textArea, textField, type FieldErrors, type ViewContext } from './parts.js';

/** A form's values as typed, to render it again. */
export interface ClientFormValues {
  name: string;
  category: string;
  description: string;
  scopes: string[];
  /** `<api>\n<dimension>` → the values as typed. */
  constraints: Record<string, string>;
}

/** The IDs of the client form's fields, by the API's field names. */
export function clientFieldId(apis: readonly ApiDefinition[], field: string): string {
  const [head, apiId, part, dimension] = field.split('.');
  if (head === 'name' || head === 'category' || head === 'description') return `client-${head}`;
  const index = apis.findIndex((api) => api.id === apiId);
  if (head === 'resources' && index >= 0) {
    const dimensionIndex = apis[index]!.constraints?.indexOf(dimension ?? '') ?? -1;
    if (part === 'constraints' && dimensionIndex >= 0) return `constraint-${index}-${dimensionIndex}`;
    return `api-${index}`;
  }
  return head === 'resources' ? 'apis' : authFieldId(field);
}

/** The form of a client configuration: new (no ID) or an edit; `auth`: its authentication fields (views/client-authentication.ts). */
export function clientFormPage(view: ViewContext, values: ClientFormValues, errors: FieldErrors | undefined, existing?: { clientId: string; name: string }, auth = ''): string {
  const { t } = view;
  const action = existing ? `${view.base}/client-configurations/${encodeURIComponent(existing.clientId)}` : `${view.base}/client-configurations`;
  const heading = existing ? t.clients.editHeading(existing.name) : t.clients.create;
  const apiFieldsets = view.apis.map((api, index) => {
    const { attributes, message } = fieldError(`api-${index}`, errors);
    const scopes = Object.keys(api.scopes).map((scope, scopeIndex) => {
      const id = `scope-${index}-${scopeIndex}`;
      return `<div class="check"><input type="checkbox" id="${id}" name="scope" value="${e(scope)}"${values.scopes.includes(scope) ? ' checked' : ''}><label for="${id}"><code>${e(scope)}</code> ${e(view.scopeWords(scope))}</label></div>`;
    }).join('\n');
    const constraints = (api.constraints ?? []).map((dimension, dimensionIndex) => {
      const id = `constraint-${index}-${dimensionIndex}`;
      return textField(id, t.clients.constraint(dimension), `constraint.${api.id}.${dimension}`, values.constraints[`${api.id}\n${dimension}`] ?? '', errors, { hint: t.clients.constraintHint, max: 2000 });
    }).join('\n');
    return `<fieldset id="api-${index}" tabindex="-1"${attributes}><legend>${e(api.name)}</legend>${message}
${scopes}
${constraints}
</fieldset>`;
  }).join('\n');
  const apisError = fieldError('apis', errors, 'apis-hint');
  return `<p><a href="${view.base}">${e(t.back)}</a></p>
<h1 id="form-heading">${e(heading)}</h1>
<form method="post" action="${action}" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
${errorSummary(view, errors)}
${textField('client-name', t.name, 'name', values.name, errors, { required: true })}
${textField('client-category', t.clients.category, 'category', values.category, errors, { required: true, hint: t.clients.categoryHint })}
${textArea('client-description', `${t.description} ${t.optional}`, 'description', values.description, errors)}
<div id="apis" tabindex="-1" role="group" aria-labelledby="apis-label"${apisError.attributes}><p class="group-label" id="apis-label">${e(t.clients.apis)}</p><p class="hint" id="apis-hint">${e(t.clients.apisHint)}</p>${apisError.message}
${apiFieldsets}
</div>
${auth}<button class="primary" type="submit">${e(existing ? t.clients.save : t.clients.create)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}
