import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import express from 'express';
import Koa from 'koa';
import mount from 'koa-mount';
import { createAuthServer, type AuthServer } from '../../src/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { capturingLogger, demoApis } from '../support/fixtures.js';
import { basic, postToken } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { startHost } from '../support/host.js';

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

async function machineToken(oauthUrl: string, auth: AuthServer, body = 'grant_type=client_credentials&scope=scim.read') {
  const client = await auth.clientConfigurations.create({
    tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read', 'scim.write'] } },
  });
  return postToken(oauthUrl, body, { authorization: basic(client.clientId, client.clientSecret) });
}

describe('embedded in an Express host (auth.middleware)', () => {
  it('works behind express.json() and express.urlencoded(): token, sign-in form, code exchange, host routes after it', async () => {
    const host = await startHost((auth) => {
      const app = express();
      app.use(express.json());
      app.use(express.urlencoded({ extended: false }));
      app.use(auth.middleware);
      app.get('/hello', (_req, res) => {
        res.send('host route');
      });
      return app;
    });
    try {
      const oauthUrl = `${host.baseUrl}/auth2/oauth2`;
      const machine = await machineToken(oauthUrl, host.auth);
      expect(machine.status).toBe(200);
      expect(machine.body.scope).toBe('scim.read');
      // The host's parser turned a repeated field into a list: still refused as a repeat.
      const twice = await machineToken(oauthUrl, host.auth, 'grant_type=client_credentials&scope=scim.read&scope=scim.write');
      expect(twice.status).toBe(400);
      expect(twice.body).toMatchObject({ error: 'invalid_request', error_description: "parameter 'scope' must not be provided twice" });

      const app = await host.auth.appRegistrations.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' });
      const server = { baseUrl: host.baseUrl, oauthUrl } as Parameters<typeof signInForCode>[0];
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: 'https://web.example/cb' }, alice);
      const tokens = await postToken(
        oauthUrl,
        { grant_type: 'authorization_code', code, redirect_uri: 'https://web.example/cb', code_verifier: verifier },
        { authorization: basic(app.clientId, app.clientSecret!) },
      );
      expect(tokens.status).toBe(200);

      expect(await (await fetch(`${host.baseUrl}/hello`)).text()).toBe('host route');
      expect((await fetch(`${host.baseUrl}/nothing-here`)).status).toBe(404);
      const warnings = host.logLines.filter((line) => line.includes('host body parser'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('mount talent-auth before any body parser');
    } finally {
      await host.stop();
    }
  });

  it('a host parser that keeps nothing usable: a clear 500 at once, never a hang, and the fix in the log', async () => {
    const host = await startHost((auth) => {
      const app = express();
      // Reads every body and keeps nothing of it (as a streaming upload parser would).
      app.use((req, _res, next) => {
        req.resume();
        req.on('end', () => next());
      });
      app.use(auth.middleware);
      return app;
    });
    try {
      const started = Date.now();
      const answer = await machineToken(`${host.baseUrl}/auth2/oauth2`, host.auth);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(answer.status).toBe(500);
      expect(answer.body).toMatchObject({ error: 'server_error' });
      expect(String(answer.body.error_description)).toContain('mount talent-auth before any body parser');
      expect(host.logLines.some((line) => line.includes('"level":"error"') && line.includes('kept nothing usable'))).toBe(true);
    } finally {
      await host.stop();
    }
  });

  it('app.use("/auth2", ...) with pathPrefix "/auth2" doubles the prefix: answered with what to change', async () => {
    const host = await startHost((auth) => {
      const app = express();
      app.use('/auth2', auth.middleware);
      return app;
    });
    try {
      for (const path of ['/auth2/oauth2/token', '/auth2/oauth2/.well-known/openid-configuration', '/auth2/auth2/oauth2/jwks']) {
        const response = await fetch(`${host.baseUrl}${path}`);
        expect(response.status).toBe(500);
        const body = (await response.json()) as { error: string; error_description: string };
        expect(body.error).toBe('server_error');
        expect(body.error_description).toContain("mounted under '/auth2'");
        expect(body.error_description).toContain('mount it at the root');
      }
      expect(host.logLines.filter((line) => line.includes('mounted under the wrong path'))).toHaveLength(1);
    } finally {
      await host.stop();
    }
  });

  it('a mount path that baseUrl ends with is right: app.use("/auth2", ...) with baseUrl .../auth2 and no pathPrefix', async () => {
    const host = await startHost((auth) => {
      const app = express();
      app.use('/auth2', auth.middleware);
      return app;
    }, { pathPrefix: '', basePath: '/auth2' });
    try {
      const oauthUrl = `${host.baseUrl}/auth2/oauth2`;
      expect((await machineToken(oauthUrl, host.auth)).status).toBe(200);
      const discovery = (await (await fetch(`${oauthUrl}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
      expect(discovery.token_endpoint).toBe(`${oauthUrl}/token`);
    } finally {
      await host.stop();
    }
  });
});

describe('embedded in a Koa host: mistakes answered, body parsers tolerated', () => {
  it('mount("/auth2", auth.app) with pathPrefix "/auth2": answered with what to change', async () => {
    const host = await startHost((auth) => {
      const app = new Koa();
      app.use(mount('/auth2', auth.app));
      return app.callback();
    });
    try {
      const response = await fetch(`${host.baseUrl}/auth2/oauth2/token`, { method: 'POST' });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error_description: string }).error_description).toContain('mount it at the root');
    } finally {
      await host.stop();
    }
  });

  it('works behind @koa/bodyparser mounted first', async () => {
    const host = await startHost((auth) => {
      const app = new Koa();
      app.use(bodyParser());
      app.use(mount(auth.app));
      return app.callback();
    });
    try {
      const oauthUrl = `${host.baseUrl}/auth2/oauth2`;
      expect((await machineToken(oauthUrl, host.auth)).status).toBe(200);
      const app = await host.auth.appRegistrations.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'public' });
      const server = { baseUrl: host.baseUrl, oauthUrl } as Parameters<typeof signInForCode>[0];
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: 'https://web.example/cb' }, alice);
      const tokens = await postToken(oauthUrl, {
        grant_type: 'authorization_code', client_id: app.clientId, code, redirect_uri: 'https://web.example/cb', code_verifier: verifier,
      });
      expect(tokens.status).toBe(200);
    } finally {
      await host.stop();
    }
  });
});
