import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import mount from 'koa-mount';
import { createAuthServer, type AuthServer } from '../../src/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { capturingLogger, demoApis } from '../support/fixtures.js';
import { basic, postToken } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

describe('embedded in a host Koa app', () => {
  let http: Server;
  let auth: AuthServer;
  let baseUrl: string;

  beforeAll(async () => {
    http = createServer();
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    auth = await createAuthServer({
      baseUrl, pathPrefix: '/auth2', apis: demoApis, accounts: testAccounts([alice]),
      cookieKeys: ['a-cookie-key-of-at-least-32-characters'], logger: capturingLogger().logger,
    });
    const host = new Koa();
    host.keys = ['the-host-has-keys-of-its-own-entirely'];
    host.use(async (ctx, next) => {
      if (ctx.path === '/') ctx.body = 'host home';
      else await next();
    });
    host.use(mount(auth.app));
    http.on('request', host.callback());
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await auth.close();
  });

  it('serves its own routes and the whole sign-in flow, whatever cookie keys the host has', async () => {
    expect(await (await fetch(`${baseUrl}/`)).text()).toBe('host home');
    const app = await auth.appRegistrations.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' });
    const server = { baseUrl, oauthUrl: `${baseUrl}/auth2/oauth2` } as Parameters<typeof signInForCode>[0];
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: 'https://web.example/cb' }, alice);
    const tokens = await postToken(
      `${baseUrl}/auth2/oauth2`,
      { grant_type: 'authorization_code', code, redirect_uri: 'https://web.example/cb', code_verifier: verifier },
      { authorization: basic(app.clientId, app.clientSecret!) },
    );
    expect(tokens.status).toBe(200);
    expect(typeof tokens.body.refresh_token).toBe('string');
  });
});
