import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

/** Every error of the token endpoint that applies to client_credentials (docs/errors.md), and malformed input. */
describe.each(STORE_KINDS)('token endpoint errors (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let clientId: string;
  let clientSecret: string;
  let good: string;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), limits: { tokenRequestBytes: 4096 } });
    ({ clientId, clientSecret } = await server.auth.clientConfigurations.create({
      tenant: 'acme',
      name: 'Sync',
      category: 'hr',
      resources: { scim: { scopes: ['scim.read'], constraints: { group: ['eng'] } } },
    }));
    good = basic(clientId, clientSecret);
  });
  afterAll(async () => {
    await server.stop();
  });

  const cc = 'grant_type=client_credentials';

  async function expectInvalidClient(response: Awaited<ReturnType<typeof postToken>>) {
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('invalid_client');
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"/);
    expect(response.headers.get('cache-control')).toBe('no-store');
  }

  it.each([
    ['a scope with quotes', `${'grant_type=client_credentials'}&scope=${encodeURIComponent('scim.read "x"')}`, {}],
    ['a scope with a backslash and non-ASCII', `${'grant_type=client_credentials'}&scope=${encodeURIComponent('a\\b \u00e9\u202e')}`, {}],
    ['an engine error quoting the Origin', 'grant_type=client_credentials', { origin: 'https://a"b\\c.example' }],
    ['a parameter twice', 'grant_type=client_credentials&scope=a&scope=b', {}],
  ])('every error_description is in the RFC 6749 charset (no quote, no backslash): %s', async (_name, body, headers) => {
    const response = await postToken(server.oauthUrl, body, { authorization: good, ...headers });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(String(response.body.error_description)).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
  });

  describe('invalid_client (401 + WWW-Authenticate)', () => {
    it('wrong secret', async () => {
      await expectInvalidClient(await postToken(server.oauthUrl, cc, { authorization: basic(clientId, 'wrong') }));
    });

    it('secret of another length and an empty one', async () => {
      await expectInvalidClient(await postToken(server.oauthUrl, cc, { authorization: basic(clientId, `${clientSecret}x`) }));
      await expectInvalidClient(await postToken(server.oauthUrl, cc, { authorization: `Basic ${Buffer.from(`${clientId}:`).toString('base64')}` }));
    });

    it('unknown client', async () => {
      await expectInvalidClient(await postToken(server.oauthUrl, cc, { authorization: basic('00000000-0000-4000-8000-000000000000', clientSecret) }));
    });

    it('missing credentials', async () => {
      await expectInvalidClient(await postToken(server.oauthUrl, cc));
    });

    it('client_id in the body instead of Basic', async () => {
      await expectInvalidClient(await postToken(server.oauthUrl, `${cc}&client_id=${clientId}`));
    });

    it('secret in the body, alone or beside the header', async () => {
      await expectInvalidClient(
        await postToken(server.oauthUrl, `${cc}&client_id=${clientId}&client_secret=${clientSecret}`),
      );
      await expectInvalidClient(
        await postToken(server.oauthUrl, `${cc}&client_secret=${clientSecret}`, { authorization: good }),
      );
    });

    it.each([
      ['Bearer scheme', () => `Bearer ${clientSecret}`],
      ['not base64', () => 'Basic %%%'],
      ['no colon', () => `Basic ${Buffer.from(clientId).toString('base64')}`],
      ['empty', () => 'Basic '],
      ['bad escapes', () => `Basic ${Buffer.from(`${clientId}:%zz`).toString('base64')}`],
    ])('malformed Authorization header: %s', async (_name, header) => {
      await expectInvalidClient(await postToken(server.oauthUrl, cc, { authorization: header() }));
    });
  });

  describe('invalid_request (400)', () => {
    async function expectInvalidRequest(response: Awaited<ReturnType<typeof postToken>>, status = 400) {
      expect(response.status).toBe(status);
      expect(response.body.error).toBe('invalid_request');
      expect(typeof response.body.error_description).toBe('string');
    }

    it('missing grant_type', async () => {
      await expectInvalidRequest(await postToken(server.oauthUrl, 'scope=scim.read', { authorization: good }));
    });

    it('duplicated parameters', async () => {
      await expectInvalidRequest(await postToken(server.oauthUrl, `${cc}&scope=scim.read&scope=scim.read`, { authorization: good }));
      await expectInvalidRequest(await postToken(server.oauthUrl, `${cc}&${cc}`, { authorization: good }));
    });

    it('values not correctly URL-encoded', async () => {
      await expectInvalidRequest(await postToken(server.oauthUrl, `${cc}&scope=%E0%A4%A`, { authorization: good }));
      await expectInvalidRequest(await postToken(server.oauthUrl, `${cc}&scope=%FF`, { authorization: good }));
    });

    it('a body that is not UTF-8', async () => {
      const response = await fetch(`${server.oauthUrl}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: good },
        body: Buffer.concat([Buffer.from(`${cc}&scope=`), Buffer.from([0xc3, 0x28])]),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    });

    it('wrong content type', async () => {
      await expectInvalidRequest(
        await postToken(server.oauthUrl, JSON.stringify({ grant_type: 'client_credentials' }), {
          authorization: good,
          'content-type': 'application/json',
        }),
      );
    });

    it('a body over the limit (413)', async () => {
      await expectInvalidRequest(
        await postToken(server.oauthUrl, `${cc}&scope=${'a'.repeat(5000)}`, { authorization: good }),
        413,
      );
    });

    it('GET (405, Allow: POST)', async () => {
      const response = await fetch(`${server.oauthUrl}/token?${cc}`, { headers: { authorization: good } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    });

    it.each(['code=abc', 'code_verifier=' + 'a'.repeat(43), 'redirect_uri=https%3A%2F%2Fa.example%2Fcb', 'refresh_token=abc'])(
      'a parameter of another grant on client_credentials: %s',
      async (extra) => {
        const response = await postToken(server.oauthUrl, `${cc}&${extra}`, { authorization: good });
        await expectInvalidRequest(response);
        expect(response.body.error_description).toMatch(/does not belong to grant_type client_credentials/);
        expect(response.body.access_token).toBeUndefined();
      },
    );

    it('an incomplete body (shorter than Content-Length): no token is issued', async () => {
      const { request } = await import('node:http');
      const url = new URL(`${server.oauthUrl}/token`);
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '200', authorization: good },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.write(cc);
        setTimeout(() => req.destroy(), 300);
      }).catch(() => 0);
      // The client hung up before sending the declared length: no token is issued either way.
      expect([0, 400]).toContain(status);
    });
  });

  it('guards every spelling of the token path the engine answers (case, trailing slash)', async () => {
    for (const path of ['Token', 'TOKEN', 'token/', 'Token//']) {
      const response = await fetch(`${server.oauthUrl}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `${cc}&client_id=${clientId}&client_secret=${clientSecret}`,
      });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
    }
  });

  it('treats client IDs that are not UUIDs as unknown (no store lookup, never a 500)', async () => {
    for (const id of ['group:acme', 'group:', '*', '../x', 'x'.repeat(300)]) {
      await expectInvalidClient(await postToken(server.oauthUrl, cc, { authorization: basic(id, clientSecret) }));
    }
  });

  it('unsupported grant types → unsupported_grant_type', async () => {
    for (const grant of ['password', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code', 'x']) {
      const response = await postToken(server.oauthUrl, `grant_type=${encodeURIComponent(grant)}`, { authorization: good });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('unsupported_grant_type');
    }
  });

  it('accepts a multipart/form-data body with the same fields', async () => {
    const form = new FormData();
    form.set('grant_type', 'client_credentials');
    form.set('scope', 'scim.read');
    const response = await fetch(`${server.oauthUrl}/token`, { method: 'POST', headers: { authorization: good }, body: form });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { scope: string }).scope).toBe('scim.read');
  });

  it('treats an empty-valued parameter as omitted (RFC 6749 §3.1)', async () => {
    const response = await postToken(server.oauthUrl, `${cc}&scope=`, { authorization: good });
    expect(response.status).toBe(200);
    expect(response.body.scope).toBe('scim.read');
  });

  it('leaves the client intact after refused requests: same record, same secret works', async () => {
    const before = await server.auth.clientConfigurations.get(clientId);
    await postToken(server.oauthUrl, `${cc}&client_id=${clientId}&client_secret=x`);
    await postToken(server.oauthUrl, `${cc}&scope=${'%'.repeat(10)}`, { authorization: good });
    expect(await server.auth.clientConfigurations.get(clientId)).toEqual(before);
    const response = await postToken(server.oauthUrl, cc, { authorization: good });
    expect(response.status).toBe(200);
  });

  it('never answers 500 to garbage', async () => {
    const bodies = ['', '&&&', '=', '==&=', 'grant_type', 'grant_type=client_credentials&scope=\u0000', '%', 'a=%00'];
    for (const body of bodies) {
      const response = await postToken(server.oauthUrl, body, { authorization: good });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(typeof response.body.error).toBe('string');
    }
  });
});
