import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const resources = { scim: { scopes: ['scim.read'] } };
const CC = 'grant_type=client_credentials';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newClient(server: RunningServer) {
  return server.auth.clientConfigurations.create({ tenant: 'acme', name: 'n', category: 'c', resources });
}

describe.each(STORE_KINDS)('failed client authentication rate limit (%s store)', (kind) => {
  const store = useStore(kind);

  describe('per client ID', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({
        store: store.option(),
        rateLimits: { failedClientAuth: { perClient: { max: 3, windowSeconds: 2 }, perAddress: { max: 50, windowSeconds: 60 } } },
      });
    });
    afterAll(() => server.stop());

    it('answers 429 with Retry-After once a client ID failed max times, even to its correct secret, until the window ends', async () => {
      const attacked = await newClient(server);
      const other = await newClient(server);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const failed = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, `guess-${attempt}`) });
        expect(failed.status).toBe(401);
        expect(failed.body.error).toBe('invalid_client');
      }
      const refused = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, 'guess-4') });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('temporarily_unavailable');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(2);
      expect(refused.headers.get('cache-control')).toBe('no-store');

      const correctButLocked = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, attacked.clientSecret) });
      expect(correctButLocked.status).toBe(429);
      expect(correctButLocked.body.access_token).toBeUndefined();

      // Another client, from the same address, is not affected.
      const bystander = await postToken(server.oauthUrl, CC, { authorization: basic(other.clientId, other.clientSecret) });
      expect(bystander.status).toBe(200);

      await sleep(2200);
      const afterWindow = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, attacked.clientSecret) });
      expect(afterWindow.status).toBe(200);
    });

    it('counts a client ID in any letter case as the same client', async () => {
      const client = await newClient(server);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const id = attempt % 2 ? client.clientId.toUpperCase() : client.clientId;
        expect((await postToken(server.oauthUrl, CC, { authorization: basic(id, 'wrong') })).status).toBe(401);
      }
      expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, client.clientSecret) })).status).toBe(429);
    });

    it('does not count successes, other errors or malformed requests without credentials', async () => {
      const client = await newClient(server);
      const good = { authorization: basic(client.clientId, client.clientSecret) };
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect((await postToken(server.oauthUrl, CC, good)).status).toBe(200);
        expect((await postToken(server.oauthUrl, `${CC}&scope=nope`, good)).body.error).toBe('invalid_scope');
      }
      expect((await postToken(server.oauthUrl, CC, good)).status).toBe(200);
    });

    it('logs refusals and failures with the client ID and address, never the secret tried', async () => {
      const client = await newClient(server);
      for (let attempt = 0; attempt < 4; attempt += 1) {
        await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, `secret-guess-${attempt}`) });
      }
      const lines = server.logLines.filter((line) => line.includes(client.clientId));
      expect(lines.some((line) => line.includes('client authentication failed') && line.includes('127.0.0.1'))).toBe(true);
      expect(lines.some((line) => line.includes('too many failures'))).toBe(true);
      expect(server.logLines.join('\n')).not.toMatch(/secret-guess/);
    });
  });

  describe('per source address', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({
        store: store.option(),
        proxy: true,
        rateLimits: { failedClientAuth: { perClient: { max: 100, windowSeconds: 60 }, perAddress: { max: 4, windowSeconds: 60 } } },
      });
    });
    afterAll(() => server.stop());

    it('locks out an address that tries many client IDs, and no other address', async () => {
      const victim = await newClient(server);
      const attacker = { 'x-forwarded-for': '203.0.113.7' };
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const id = (await newClient(server)).clientId;
        const failed = await postToken(server.oauthUrl, CC, { ...attacker, authorization: basic(id, 'wrong') });
        expect(failed.status).toBe(401);
      }
      const refused = await postToken(server.oauthUrl, CC, { ...attacker, authorization: basic(victim.clientId, victim.clientSecret) });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

      const elsewhere = await postToken(server.oauthUrl, CC, {
        'x-forwarded-for': '198.51.100.9',
        authorization: basic(victim.clientId, victim.clientSecret),
      });
      expect(elsewhere.status).toBe(200);
    });

    it('counts failures of malformed credentials and unknown clients against the address', async () => {
      const from = { 'x-forwarded-for': '203.0.113.8' };
      const attempts = [
        { authorization: 'Basic !!!' },
        { authorization: basic('not-a-uuid', 'x') },
        { authorization: basic('00000000-0000-4000-8000-000000000000', 'x') },
        { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` },
      ];
      for (const headers of attempts) {
        expect((await postToken(server.oauthUrl, CC, { ...from, ...headers })).status).toBe(401);
      }
      const client = await newClient(server);
      expect((await postToken(server.oauthUrl, CC, { ...from, authorization: basic(client.clientId, client.clientSecret) })).status).toBe(429);
    });
  });

  it('can be turned off', async () => {
    const server = await startServer({ store: store.option(), rateLimits: { failedClientAuth: false } });
    try {
      const client = await newClient(server);
      for (let attempt = 0; attempt < 15; attempt += 1) {
        expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') })).status).toBe(401);
      }
      expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, client.clientSecret) })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('applies the defaults: 10 failures per client ID per minute', async () => {
    const server = await startServer({ store: store.option() });
    try {
      const client = await newClient(server);
      for (let attempt = 0; attempt < 10; attempt += 1) {
        expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') })).status).toBe(401);
      }
      const refused = await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, client.clientSecret) });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(50);
    } finally {
      await server.stop();
    }
  });

  if (kind === 'redis') {
    it('is shared by every instance on the store', async () => {
      const option = store.option();
      const limits = { failedClientAuth: { perClient: { max: 2, windowSeconds: 30 }, perAddress: { max: 50, windowSeconds: 30 } } };
      const first = await startServer({ store: option, rateLimits: limits });
      const second = await startServer({ store: option, rateLimits: limits });
      try {
        const client = await newClient(first);
        for (const server of [first, second]) {
          expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') })).status).toBe(401);
        }
        for (const server of [first, second]) {
          expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, client.clientSecret) })).status).toBe(429);
        }
      } finally {
        await Promise.all([first.stop(), second.stop()]);
      }
    });
  }
});
