import type { KoaContextWithOIDC } from 'oidc-provider';
import { oauthErrorPage, sendPage } from '../pages/html.js';

/** The engine's error page for browsers (unknown client, unregistered redirect URI, ...). */
export async function renderErrorPage(
  ctx: KoaContextWithOIDC,
  out: { error: string; error_description?: string },
): Promise<void> {
  // The engine has set the status already.
  sendPage(ctx, oauthErrorPage(out.error, out.error_description ?? ''), ctx.status);
}
