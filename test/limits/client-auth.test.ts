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

    it('answers failures past the limit with 429 and Retry-After until the window ends; the correct secret still works', async () => {
      const attacked = await newClient(server);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const failed = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, `guess-${attempt}`) });
        expect(failed.status).toBe(401);
        expect(failed.body.error).toBe('invalid_client');
      }
      const refused = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, 'guess-4') });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('temporarily_unavailable');
      expect(refused.headers.get('www-authenticate')).toBeNull();
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(2);
      expect(refused.headers.get('cache-control')).toBe('no-store');

      // Client IDs are public: a lock on the correct secret would let anyone lock any app out.
      const owner = await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, attacked.clientSecret) });
      expect(owner.status).toBe(200);
      expect((await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, 'guess-5') })).status).toBe(429);

      await sleep(2200);
      expect((await postToken(server.oauthUrl, CC, { authorization: basic(attacked.clientId, 'guess-6') })).status).toBe(401);
    });

    it('counts parallel guesses exactly: no more than max of a burst get 401', async () => {
      const client = await newClient(server);
      const burst = await Promise.all(
        Array.from({ length: 12 }, (_, index) => postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, `burst-${index}`) })),
      );
      const statuses = burst.map(({ status }) => status).sort();
      expect(statuses.filter((status) => status === 401)).toHaveLength(3);
      expect(statuses.filter((status) => status === 429)).toHaveLength(9);
    });

    it('counts a failure whatever the caller accepts, and answers it in JSON (RFC 6749 §5.2)', async () => {
      const client = await newClient(server);
      const html = { accept: 'text/html' };
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const failed = await postToken(server.oauthUrl, CC, { ...html, authorization: basic(client.clientId, 'wrong') });
        expect(failed.status).toBe(401);
        expect(failed.headers.get('content-type')).toMatch(/^application\/json/);
        expect(failed.body.error).toBe('invalid_client');
      }
      expect((await postToken(server.oauthUrl, CC, { ...html, authorization: basic(client.clientId, 'wrong') })).status).toBe(429);
    });

    it('counts a percent-encoded spelling of a client ID as that client (RFC 6749 §2.3.1)', async () => {
      const client = await newClient(server);
      const encoded = client.clientId.replace(/[a-f]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`);
      const spelled = (secret: string) => `Basic ${Buffer.from(`${encoded}:${secret}`).toString('base64')}`;
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await postToken(server.oauthUrl, CC, { authorization: spelled('wrong') })).status).toBe(401);
      }
      expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') })).status).toBe(429);
    });

    it('counts a client ID in any letter case as the same client', async () => {
      const client = await newClient(server);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const id = attempt % 2 ? client.clientId.toUpperCase() : client.clientId;
        expect((await postToken(server.oauthUrl, CC, { authorization: basic(id, 'wrong') })).status).toBe(401);
      }
      expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') })).status).toBe(429);
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
      // Each failure's line has the counts: the address's, then the client's (1, 2, 3 here).
      const failures = lines.map((line) => JSON.parse(line) as { message: string; failures?: number[] }).filter((line) => line.message === 'client authentication failed').map((line) => line.failures![1]);
      expect(failures).toEqual([1, 2, 3]);
      expect(lines.some((line) => line.includes('too many failures'))).toBe(true);
      expect(server.logLines.join('\n')).not.toMatch(/secret-guess/);
    });

    it('writes one line per refused key and window, however many refusals (the limit bounds the failures)', async () => {
      const client = await newClient(server);
      const before = server.logLines.length;
      for (let attempt = 0; attempt < 40; attempt += 1) {
        await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') });
      }
      const written = server.logLines.slice(before).filter((line) => line.includes(client.clientId));
      // 40 refusals: one line for the client ID's limit and one for the address's (this suite's
      // per-address limit is reached too), not one per request.
      expect(written.filter((line) => line.includes('too many failures')).length).toBeLessThanOrEqual(2);
      // The audit trail follows the log: one client_auth.rate_limited event per key and window.
      expect(written.filter((line) => line.includes('client_auth.rate_limited')).length).toBeLessThanOrEqual(2);
      expect(written.length).toBeLessThanOrEqual(7);
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

    it('refuses an address that failed too often, before checking its credentials, and no other address', async () => {
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
      // Held before its credentials are read: the line names the client it claimed, the address and the count that held it.
      const held = server.logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['message'] === 'client authentication refused: too many failures' && line['address'] === '203.0.113.7');
      expect(held).toEqual([expect.objectContaining({ client_id: victim.clientId, failures: 4, retry_after: expect.any(Number) })]);
      expect(held[0]!['retry_after']).toBeGreaterThan(30);

      const elsewhere = await postToken(server.oauthUrl, CC, {
        'x-forwarded-for': '198.51.100.9',
        authorization: basic(victim.clientId, victim.clientSecret),
      });
      expect(elsewhere.status).toBe(200);
    });

    it('takes the address the proxy appended, not what the client wrote before it', async () => {
      const client = await newClient(server);
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const spoofed = { 'x-forwarded-for': `198.51.100.${attempt}, 203.0.113.50`, authorization: basic(client.clientId, 'wrong') };
        expect((await postToken(server.oauthUrl, CC, spoofed)).status).toBe(401);
      }
      const rotated = { 'x-forwarded-for': '198.51.100.99, 203.0.113.50', authorization: basic(client.clientId, client.clientSecret) };
      expect((await postToken(server.oauthUrl, CC, rotated)).status).toBe(429);
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
      const refused = await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') });
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
          expect((await postToken(server.oauthUrl, CC, { authorization: basic(client.clientId, 'wrong') })).status).toBe(429);
        }
      } finally {
        await Promise.all([first.stop(), second.stop()]);
      }
    });

    it("an address held on one instance is refused on the other before its credentials are checked, with the hold's Retry-After", async () => {
      const option = store.option();
      const limits = { failedClientAuth: { perClient: { max: 100, windowSeconds: 30 }, perAddress: { max: 3, windowSeconds: 30 } } };
      const first = await startServer({ store: option, rateLimits: limits, proxy: true });
      const second = await startServer({ store: option, rateLimits: limits, proxy: true });
      try {
        const client = await newClient(first);
        const from = { 'x-forwarded-for': '203.0.113.77' };
        const owner = { ...from, authorization: basic(client.clientId, client.clientSecret) };
        expect((await postToken(second.oauthUrl, CC, owner)).status).toBe(200);
        for (let attempt = 0; attempt < 3; attempt += 1) {
          expect((await postToken(first.oauthUrl, CC, { ...from, authorization: basic(client.clientId, 'wrong') })).status).toBe(401);
        }
        // The hold travels by the change feed: known on the other instance within milliseconds.
        let refused = await postToken(second.oauthUrl, CC, owner);
        for (let tries = 0; refused.status === 200 && tries < 20; tries += 1) {
          await sleep(25);
          refused = await postToken(second.oauthUrl, CC, owner);
        }
        expect(refused.status).toBe(429);
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(20);
        expect(retryAfter).toBeLessThanOrEqual(30);
        expect((await postToken(second.oauthUrl, CC, { 'x-forwarded-for': '198.51.100.77', authorization: owner.authorization })).status).toBe(200);
      } finally {
        await Promise.all([first.stop(), second.stop()]);
      }
    });
  }
});
