import { fieldMessage } from './api-client.js';
import type { PortalKit } from './kit.js';
import { done, failed } from './outcomes.js';
import type { PortalCall } from './routes.js';
import { unlockPage } from './views/unlock.js';

/* Sign-in holds: an admin lifts the hold of a user of her organisation (the API decides whose she is). */

/** GET /sign-ins/unlock: the form. */
export async function unlockForm(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  await kit.cookies.save(ctx, now);
  kit.pages.send(ctx, kit.t.unlock.title, unlockPage(kit.pages.view(now.session), '', undefined));
}

/** POST /sign-ins/unlock: lifts a sign-in hold; the username's errors at its field. */
export async function unlock(kit: PortalKit, { ctx, now, form }: PortalCall): Promise<void> {
  const { t } = kit;
  const username = form.get('username') ?? '';
  const refused = (message: string) => kit.pages.send(ctx, t.unlock.title, unlockPage(kit.pages.view(now.session), username, new Map([['unlock-username', message]])), { status: 400 });
  if (!username.trim()) return refused(t.unlock.required);
  const answer = await kit.api.call(now.session, 'POST', 'sign-ins/unlock', { username });
  if (answer.status === 400) {
    await kit.cookies.save(ctx, now);
    return refused(fieldMessage(answer, 'username'));
  }
  if (answer.status !== 200) return failed(kit, ctx, now, answer);
  return done(kit, ctx, now, answer.body.unlocked === true ? t.unlock.unlocked(username) : t.unlock.notHeld(username));
}
