import { escapeHtml as e } from '../../pages/html.js';
import type { Notice } from '../sessions.js';
import type { AppRegistrationWire, ClientConfigurationWire, ConsentWire, PlatformAppWire, AuditEventWire } from '../wire.js';
import { hasSecret } from '../client-authentication.js';
import { activityTable, type ActivityNames } from './activity.js';
import { csrfField, header, noticeHtml, when, type PageUser, type ViewContext } from './parts.js';

/* The home page: the organisation's setup (with the permission), the user's consents. */

function clientsTable(view: ViewContext, clients: ClientConfigurationWire[]): string {
  const { t } = view;
  if (!clients.length) return `<p class="muted">${e(t.clients.none)}</p>`;
  const rows = clients.map((client) => {
    const scopes = Object.entries(client.resources).map(([apiId, resource]) => {
      const api = view.apis.find((entry) => entry.id === apiId);
      const constraints = Object.entries(resource.constraints ?? {}).map(([dimension, values]) => `${dimension} = ${values.join(', ')}`).join('; ');
      return `<span class="muted">${e(api?.name ?? apiId)}:</span> ${e(resource.scopes.join(', '))}${constraints ? ` (${e(constraints)})` : ''}`;
    }).join('<br>');
    const id = encodeURIComponent(client.client_id);
    return `<tr>
<th scope="row">${e(client.name)}${client.description ? `<br><span class="muted">${e(client.description)}</span>` : ''}</th>
<td>${e(client.category)}</td>
<td><code>${e(client.client_id)}</code></td>
<td>${scopes}</td>
<td class="actions"><a href="${view.base}/client-configurations/${id}" aria-label="${e(`${t.edit} ${client.name}`)}">${e(t.edit)}</a>
${hasSecret(client) ? `<a href="${view.base}/client-configurations/${id}/secret" aria-label="${e(`${t.regenerate}: ${client.name}`)}">${e(t.regenerate)}</a>` : `<span class="muted">${e(t.clientAuth.noSecret)}</span>`}
<a href="${view.base}/client-configurations/${id}/delete" aria-label="${e(`${t.delete} ${client.name}`)}">${e(t.delete)}</a></td>
</tr>`;
  }).join('\n');
  return `<table aria-labelledby="clients-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.clients.category)}</th><th scope="col">${e(t.clientId)}</th><th scope="col">${e(t.clients.scopesColumn)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function appsTable(view: ViewContext, apps: AppRegistrationWire[]): string {
  const { t } = view;
  if (!apps.length) return `<p class="muted">${e(t.apps.none)}</p>`;
  const rows = apps.map((app) => {
    const id = encodeURIComponent(app.client_id);
    const regenerate = hasSecret(app)
      ? `<a href="${view.base}/app-registrations/${id}/secret" aria-label="${e(`${t.regenerate}: ${app.name}`)}">${e(t.regenerate)}</a>`
      : `<span class="muted">${e(app.client_type === 'public' ? t.apps.noSecret : t.clientAuth.noSecret)}</span>`;
    return `<tr>
<th scope="row">${e(app.name)}${app.description ? `<br><span class="muted">${e(app.description)}</span>` : ''}</th>
<td>${e(app.client_type)}${app.client_type === 'confidential' && !app.pkce_enabled ? '<br><span class="muted">PKCE off</span>' : ''}</td>
<td><code>${e(app.client_id)}</code></td>
<td>${app.redirect_uris.map((uri) => `<code>${e(uri)}</code>`).join('<br>')}</td>
<td class="actions"><a href="${view.base}/app-registrations/${id}" aria-label="${e(`${t.edit} ${app.name}`)}">${e(t.edit)}</a>
${regenerate}
<a href="${view.base}/app-registrations/${id}/delete" aria-label="${e(`${t.delete} ${app.name}`)}">${e(t.delete)}</a></td>
</tr>`;
  }).join('\n');
  return `<table aria-labelledby="apps-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.apps.typeColumn)}</th><th scope="col">${e(t.clientId)}</th><th scope="col">${e(t.apps.redirectUris)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

/** The user's own consents, each with its revoke button. */
export function consentsSection(view: ViewContext, consents: ConsentWire[] | undefined): string {
  const { t } = view;
  let content: string;
  if (!consents) content = `<p class="error" role="alert">${e(t.consents.loadFailed)}</p>`;
  else if (!consents.length) content = `<p class="muted">${e(t.consents.none)}</p>`;
  else {
    const rows = consents.map((consent) => {
      const name = consent.app_name ?? t.consents.deletedApp;
      const scopes = consent.scopes.map(({ scope }) => {
        const words = view.consentScopeWords(scope);
        return `<li>${e(words.api ? `${words.api}: ${words.description}` : words.description)}</li>`;
      }).join('');
      return `<tr>
<th scope="row">${e(name)}<br><code>${e(consent.client_id)}</code></th>
<td><ul>${scopes}</ul></td>
<td>${e(when(consent.updated_at))}</td>
<td><form method="post" action="${view.base}/consents/${encodeURIComponent(consent.client_id)}/revoke">${csrfField(view)}<button class="secondary" type="submit" aria-label="${e(t.consents.revokeLabel(name))}">${e(t.consents.revoke)}</button></form></td>
</tr>`;
    }).join('\n');
    content = `<table aria-labelledby="consents-heading"><thead><tr><th scope="col">${e(t.consents.app)}</th><th scope="col">${e(t.consents.may)}</th><th scope="col">${e(t.consents.since)}</th><th scope="col">${e(t.actions)}</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  }
  return `<section aria-labelledby="consents-heading">
<h2 id="consents-heading">${e(t.consents.heading)}</h2>
<p class="muted">${e(t.consents.lead)}</p>
${content}
</section>`;
}

function platformAppsSection(view: ViewContext, apps: PlatformAppWire[]): string {
  const { t } = view;
  const rows = apps.map((app) => `<tr>
<th scope="row">${e(app.name)}${app.first_party ? ` <span class="muted">(${e(t.platformApps.firstParty)})</span>` : ''}${app.description ? `<br><span class="muted">${e(app.description)}</span>` : ''}</th>
<td>${e(app.registered_by === 'platform' ? t.platformApps.platform : t.platformApps.anotherOrganisation)}</td>
<td>${e(app.client_type)}</td>
<td><code>${e(app.client_id)}</code></td>
<td>${app.redirect_uris.map((uri) => `<code>${e(uri)}</code>`).join('<br>')}</td>
</tr>`).join('\n');
  const content = apps.length
    ? `<table aria-labelledby="platform-apps-heading"><thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.platformApps.registeredBy)}</th><th scope="col">${e(t.apps.typeColumn)}</th><th scope="col">${e(t.clientId)}</th><th scope="col">${e(t.apps.redirectUris)}</th></tr></thead><tbody>
${rows}
</tbody></table>`
    : `<p class="muted">${e(t.platformApps.none)}</p>`;
  return `<section aria-labelledby="platform-apps-heading">
<h2 id="platform-apps-heading">${e(t.platformApps.heading)}</h2>
<p class="muted">${e(t.platformApps.lead)}</p>
${content}
</section>`;
}

/** What the home page shows of the organisation's setup to a user with the permission. */
export interface SetupView {
  clients: ClientConfigurationWire[];
  apps: AppRegistrationWire[];
  platformApps?: PlatformAppWire[];
  events?: AuditEventWire[];
  names: ActivityNames;
  /** Whether she can lift sign-in holds here (the host's AccountStore looks users up by username). */
  canUnlock: boolean;
}

/** The organisation's setup: its client configurations and apps, the platform's apps, the latest Activity, sign-in holds. */
function setupSections(view: ViewContext, setup: SetupView): string {
  const { t } = view;
  return `<section aria-labelledby="clients-heading">
<h2 id="clients-heading">${e(t.clients.heading)}</h2>
<p class="muted">${e(t.clients.lead)}</p>
${clientsTable(view, setup.clients)}
<p><a class="button primary" href="${view.base}/client-configurations/new">${e(t.clients.create)}</a></p>
</section>
<section aria-labelledby="apps-heading">
<h2 id="apps-heading">${e(t.apps.heading)}</h2>
<p class="muted">${e(t.apps.lead)}</p>
${appsTable(view, setup.apps)}
<p><a class="button primary" href="${view.base}/app-registrations/new">${e(t.apps.create)}</a></p>
</section>
<section aria-labelledby="connections-heading">
<h2 id="connections-heading">${e(t.connections.heading)}</h2>
<p class="muted">${e(t.connections.lead)}</p>
<p><a href="${view.base}/connections">${e(t.connections.link)}</a></p>
</section>${setup.platformApps ? `\n${platformAppsSection(view, setup.platformApps)}` : ''}${setup.events ? `
<section aria-labelledby="activity-heading">
<h2 id="activity-heading">${e(t.activity.heading)}</h2>
<p class="muted">${e(t.activity.lead)}</p>
${activityTable(view, setup.events, setup.names)}
<p><a href="${view.base}/activity">${e(t.activity.all)}</a></p>
</section>` : ''}${setup.canUnlock ? `
<section aria-labelledby="unlock-heading">
<h2 id="unlock-heading">${e(t.unlock.heading)}</h2>
<p class="muted">${e(t.unlock.lead)}</p>
<p><a href="${view.base}/sign-ins/unlock">${e(t.unlock.link)}</a></p>
</section>` : ''}`;
}

/**
 * The home page of a signed-in user: her organisation's setup (with the permission; `forbidden`
 * without it, `failed` when it could not be read), her consents.
 */
export function dashboardPage(
  view: ViewContext,
  user: PageUser,
  notice: Notice | undefined,
  setup: SetupView | 'forbidden' | 'failed',
  consents: ConsentWire[] | undefined,
): string {
  const { t } = view;
  const sections = setup === 'forbidden'
    ? `<section aria-labelledby="setup-heading"><h2 id="setup-heading">${e(t.clients.heading)} / ${e(t.apps.heading)}</h2><p class="permission">${e(t.permission)}</p></section>`
    : setup === 'failed' ? `<p class="error" role="alert">${e(t.loadFailed)}</p>` : setupSections(view, setup);
  return `${header(view, user)}
${noticeHtml(notice)}
${sections}
${consentsSection(view, consents)}`;
}
