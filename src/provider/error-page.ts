import type { KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml, page } from '../pages/html.js';

/** The engine's error page for browsers (unknown client, unregistered redirect URI, ...). */
export async function renderErrorPage(
  ctx: KoaContextWithOIDC,
  out: { error: string; error_description?: string },
): Promise<void> {
  const { html, csp } = page(
    'Sign-in error',
    `<h1>Sign-in cannot continue</h1>
<p role="alert" class="error"><strong>${escapeHtml(out.error)}</strong>: ${escapeHtml(out.error_description ?? '')}</p>
<p class="muted">Return to the application and try again. If this keeps happening, contact its publisher.</p>`,
  );
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', csp);
  ctx.body = html;
}
