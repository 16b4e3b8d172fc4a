import { escapeHtml as e } from '../../pages/html.js';
import { csrfField, errorSummary, textField, type FieldErrors, type ViewContext } from './parts.js';

/** The form that lifts a user's sign-in hold. */
export function unlockPage(view: ViewContext, username: string, errors: FieldErrors | undefined): string {
  const { t } = view;
  return `<p><a href="${view.base}">${e(t.back)}</a></p>
<h1 id="form-heading">${e(t.unlock.title)}</h1>
<p>${e(t.unlock.lead)}</p>
<form method="post" action="${view.base}/sign-ins/unlock" aria-labelledby="form-heading" novalidate>
${csrfField(view)}
${errorSummary(view, errors)}
${textField('unlock-username', t.unlock.username, 'username', username, errors, { required: true, hint: t.unlock.usernameHint })}
<button class="primary" type="submit">${e(t.unlock.button)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}
