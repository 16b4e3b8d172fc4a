import { StoreUnavailable } from '../../adapters/types.js';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const WEB = 'https://app.example.com/cb';

type Saving = { prototype: { save: (...args: unknown[]) => Promise<unknown> } };

/** The next save of `model` fails as if the store went away mid-request. */
function failNextSave(server: RunningServer, model: 'RefreshToken' | 'AccessToken'): void {
  const { prototype } = server.auth.provider[model] as unknown as Saving;
  const save = prototype.save;
  prototype.save = async function failOnce() {
    prototype.save = save;
    throw new StoreUnavailable('connection');
  };
}

type Issuing = { prototype: { issue: (...args: unknown[]) => Promise<unknown> } };

/**
 * The next ID token fails as if the store went away: after the request consumed its code or
 * refresh token, in the step that saved the refresh token it issues.
 */
function failNextIdToken(server: RunningServer): void {
  const { prototype } = server.auth.provider.IdToken as unknown as Issuing;
  const issue = prototype.issue;
  prototype.issue = async function failOnce() {
    prototype.issue = issue;
    throw new StoreUnavailable('connection');
  };
}

/**
 * A 503 asks the client to retry. When the failed request had already consumed the code or the
 * refresh token, the retry must not count as a replay (which would end the user's grant).
 */
describe.each(STORE_KINDS)('retrying after a 503 mid-request (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let web: { clientId: string; clientSecret: string };
  const auth = () => ({ authorization: basic(web.clientId, web.clientSecret) });

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    const app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: app.clientId, clientSecret: app.clientSecret! };
  });
  afterAll(() => server.stop());

  it('code exchange: the retry gets the tokens, once', async () => {
    const { code, verifier } = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read');
    const exchange = () => postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, auth());
    failNextSave(server, 'AccessToken');
    const failed = await exchange();
    expect(failed.status).toBe(503);
    expect(failed.body.error).toBe('temporarily_unavailable');
    expect(failed.headers.get('retry-after')).toBe('1');
    const retried = await exchange();
    expect(retried.status).toBe(200);
    expect((await exchange()).body.error).toBe('invalid_grant');
  });

  it('code exchange failing after its refresh token was saved (the code consumed): the retry gets the tokens, once', async () => {
    const { code, verifier } = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read');
    const exchange = () => postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, auth());
    failNextIdToken(server);
    const failed = await exchange();
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('1');
    const retried = await exchange();
    expect(retried.status).toBe(200);
    const again = await exchange();
    expect(again.body.error).toBe('invalid_grant');
    // That was a replay: what the retry issued ends.
    const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: retried.body.refresh_token as string }, auth());
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refresh failing after its successor was saved (the token consumed): the retry rotates it, and the chain goes on', async () => {
    const { code, verifier } = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read');
    const first = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, auth());
    const refresh = (token: string) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: token }, auth());
    failNextIdToken(server);
    expect((await refresh(first.body.refresh_token as string)).status).toBe(503);
    // The 503 gave nothing: its consumption was undone, so the retry is a rotation, not the one
    // retry a lost answer gets; that one is still there (the same successor again).
    const retried = await refresh(first.body.refresh_token as string);
    expect(retried.status).toBe(200);
    const lostAnswer = await refresh(first.body.refresh_token as string);
    expect(lostAnswer.status).toBe(200);
    expect(lostAnswer.body.refresh_token).toBe(retried.body.refresh_token);
    expect((await refresh(retried.body.refresh_token as string)).status).toBe(200);
  });

  it('refresh: the retry rotates the token and the grant lives on', async () => {
    const { code, verifier } = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read');
    const first = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, auth());
    const refreshToken = first.body.refresh_token as string;
    const refresh = (token: string) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: token }, auth());
    failNextSave(server, 'RefreshToken');
    expect((await refresh(refreshToken)).status).toBe(503);
    const retried = await refresh(refreshToken);
    expect(retried.status).toBe(200);
    expect((await refresh(retried.body.refresh_token as string)).status).toBe(200);
  });
});
