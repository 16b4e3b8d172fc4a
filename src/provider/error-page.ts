import type { KoaContextWithOIDC } from 'oidc-provider';

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => escapes[char] ?? char);
}

/** The engine's error page for browsers: no external assets, the OAuth error in words. */
export async function renderErrorPage(
  ctx: KoaContextWithOIDC,
  out: { error: string; error_description?: string },
): Promise<void> {
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Something went wrong</h1>
<p><strong>${escapeHtml(out.error)}</strong></p>
<p>${escapeHtml(out.error_description ?? '')}</p></main></body></html>`;
}
