import { Redis } from 'ioredis';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import { startRedisCluster, type RedisClusterNode, type RedisClusterProcess } from '../../devtools/redis-cluster.js';
import { clientAssertion, clientKeyPair, type ClientKeyPair } from '../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const resources = { scim: { scopes: ['scim.read'] } };
const PREFIX = 'fo:';

interface Answer {
  kind: 'secret' | 'assertion';
  startedAt: number;
  status: number;
  ms: number;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/**
 * A master of a Redis Cluster with replicas killed under client_credentials load: the slots of the
 * other masters go on serving, the dead master's slots are refused at once (503), `/readyz` says
 * so, and everything is served again once its replica is promoted, without a restart.
 */
describe('Redis Cluster failover under load (3 masters, 3 replicas)', () => {
  let cluster: RedisClusterProcess;
  let server: RunningServer;
  /** Several, so that some records surely live on a master that does not carry the change feed. */
  const secretClients: Array<{ clientId: string; clientSecret: string }> = [];
  let turns = 0;
  let keyClient: string;
  let key: ClientKeyPair;

  beforeAll(async () => {
    // A short node timeout: the failover takes a few seconds. Without full coverage, the other
    // masters go on serving their slots while one has no master (docs/operations.md).
    cluster = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: 1500, requireFullCoverage: false });
    server = await startServer({ store: { type: 'redis', cluster: { nodes: cluster.urls.slice(0, 1) }, keyPrefix: PREFIX } });
    for (let i = 0; i < 6; i += 1) {
      const created = await server.auth.clientConfigurations.create({ tenant: 'acme', name: `Secret ${i}`, category: 'hr', resources });
      secretClients.push({ clientId: created.clientId, clientSecret: created.clientSecret! });
    }
    key = await clientKeyPair('k1');
    keyClient = (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Keys', category: 'hr', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [key.jwk] },
    })).clientId;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await cluster?.stop();
  });

  /**
   * A known client with a secret costs no store round trip (its configuration is cached, and served
   * as it was while its record's master fails over); one with a client assertion stores the
   * assertion's ID (single use) under its own key, in any slot.
   */
  async function token(kind: Answer['kind']): Promise<Answer> {
    const startedAt = performance.now();
    const secretClient = secretClients[(turns += 1) % secretClients.length]!;
    const answer = kind === 'secret'
      ? await postToken(server.oauthUrl, { grant_type: 'client_credentials' }, { authorization: basic(secretClient.clientId, secretClient.clientSecret) })
      : await postToken(server.oauthUrl, {
        grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await clientAssertion(keyClient, key, server.auth.issuer),
      });
    return { kind, startedAt, status: answer.status, ms: performance.now() - startedAt };
  }

  const readyz = async () => (await fetch(`${server.baseUrl}/readyz`)).status;

  /**
   * The master that holds the records of the most secret clients without carrying the change feed's
   * subscription (whose loss stops an instance until it subscribes again: docs/operations.md).
   */
  async function victim(): Promise<{ node: RedisClusterNode; clients: number }> {
    const holders = await Promise.all(secretClients.map(({ clientId }) => cluster.masterOf(`${PREFIX}rec:{client:${clientId}}`)));
    const masters = await cluster.masters();
    const subscribed = await Promise.all(masters.map(async (node) => {
      const client = new Redis(node.url, { maxRetriesPerRequest: 0, disconnectTimeout: 100 });
      client.on('error', () => {});
      try {
        return ((await client.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string).trim() !== '';
      } finally {
        client.disconnect();
      }
    }));
    const choices = masters
      .filter((_, i) => !subscribed[i])
      .map((node) => ({ node, clients: holders.filter((holder) => holder === node).length }))
      .sort((a, b) => b.clients - a.clients);
    if (!choices[0] || choices[0].clients === 0) throw new Error('the subscription\'s master holds every secret client');
    return choices[0];
  }

  it('keeps serving the live masters\' slots, refuses the dead one\'s at once, and serves all after the promotion', async () => {
    // Warm: both clients known, both kinds served, ready.
    expect((await token('secret')).status).toBe(200);
    expect((await token('assertion')).status).toBe(200);
    expect(await readyz()).toBe(200);

    const answers: Answer[] = [];
    const probes: Array<{ at: number; status: number }> = [];
    let running = true;
    const workers = Array.from({ length: 4 }, async (_, worker) => {
      for (let turn = 0; running; turn += 1) {
        answers.push(await token((worker + turn) % 2 === 0 ? 'secret' : 'assertion'));
      }
    });
    const prober = (async () => {
      while (running) {
        const at = performance.now();
        probes.push({ at, status: await readyz() });
        await sleep(100);
      }
    })();

    await sleep(500);
    const { node, clients: clientsOnIt } = await victim();
    const killedAt = performance.now();
    await node.kill();
    const failover = await cluster.waitForFailover(node, 30_000);
    const promotedAt = performance.now();
    await sleep(300);
    running = false;
    await Promise.all([...workers, prober]);

    const before = answers.filter((answer) => answer.startedAt + answer.ms < killedAt);
    const during = answers.filter((answer) => answer.startedAt >= killedAt && answer.startedAt < promotedAt);
    const refused = during.filter((answer) => answer.status !== 200);
    if (process.env.STORE_TIMINGS) {
      console.log(`failover in ${failover} ms: ${during.length} requests during it, ${refused.length} refused, `
        + `median of the refusals ${median(refused.map((answer) => answer.ms)).toFixed(1)} ms; readyz ${probes.map((probe) => probe.status).join(' ')}`);
    }
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((answer) => answer.status === 200)).toBe(true);
    expect(during.length).toBeGreaterThanOrEqual(20);
    // Only requests that need the dead master's slots are refused, and with 503.
    expect(refused.map((answer) => answer.status)).toEqual(refused.map(() => 503));
    // Secret clients whose records are on the dead master too: served from the cache meanwhile.
    expect(clientsOnIt).toBeGreaterThan(0);
    expect(during.filter((answer) => answer.kind === 'secret').every((answer) => answer.status === 200)).toBe(true);
    expect(during.length - refused.length).toBeGreaterThanOrEqual((2 / 3) * during.length);
    // A third of the assertions' IDs fall in the dead master's slots: some were refused, at once.
    expect(refused.length).toBeGreaterThan(0);
    expect(median(refused.map((answer) => answer.ms))).toBeLessThan(50);
    // Readiness saw the failover, all along: a margin on each side for the moment the dead
    // connection is noticed and the moment the promotion is seen by the helper.
    const whileDown = probes.filter((probe) => probe.at >= killedAt + 300 && probe.at < promotedAt - 500);
    expect(whileDown.length).toBeGreaterThanOrEqual(3);
    expect(whileDown.map((probe) => probe.status)).toEqual(whileDown.map(() => 503));

    // After the promotion: ready again, and every request served, without a restart.
    const deadline = Date.now() + 5000;
    while ((await readyz()) !== 200 && Date.now() < deadline) await sleep(100);
    expect(await readyz()).toBe(200);
    const after = await Promise.all(Array.from({ length: 30 }, (_, i) => token(i % 2 === 0 ? 'secret' : 'assertion')));
    expect(after.map((answer) => answer.status)).toEqual(after.map(() => 200));
  }, 60_000);
});
