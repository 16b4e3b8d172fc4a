import type { Context } from 'koa';
import type { PortalKit } from './kit.js';
import type { PortalCall } from './routes.js';
import type { Current } from './session-cookies.js';
import type { ShownSecret } from './sessions.js';
import { copyScript, secretPageBody } from './views/secret.js';

/*
 * A SECRET IS SHOWN ONCE: it travels from the API's answer into the store (sealed, apart from the
 * session) and out of it with the next GET of the secret page, never in a URL, a log line or a
 * page that can be shown again (no-store).
 */

/** Keeps a secret for the next secret page, then sends the browser there. */
export async function showSecret(kit: PortalKit, ctx: Context, now: Current, shown: ShownSecret): Promise<void> {
  await kit.setup.sessions.putSecret(now.id, shown);
  await kit.cookies.save(ctx, now);
  kit.pages.seeOther(ctx, '/secret');
}

/** GET /secret: the secret kept for this session, once (home when there is none). */
export async function secretPage(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  // A HEAD or a prefetch (a browser's guess, a link scanner) must not use the one showing up.
  const purpose = `${ctx.get('sec-purpose')} ${ctx.get('purpose')}`;
  if (ctx.method === 'HEAD' || /prefetch|prerender/i.test(purpose)) {
    ctx.status = 204;
    return;
  }
  // Shown once: taken out of the store before the page is sent (of two requests, one gets it).
  const shown = await kit.setup.sessions.takeSecret(now.id);
  await kit.cookies.save(ctx, now);
  if (!shown) return kit.pages.seeOther(ctx);
  kit.pages.send(ctx, kit.t.secret.title, secretPageBody(kit.pages.view(now.session), shown), { script: copyScript(kit.t) });
}
