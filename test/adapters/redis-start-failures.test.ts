import type { Redis } from 'ioredis';
import { StoreStartError, createRedisStore, type RedisStoreOptions } from '../../adapters/redis/index.js';
import { StartDeadlinePassed, startFailure, unavailableWords } from '../../adapters/redis/connection.js';
import { MOVES_AT_ONCE, StoreUpgradeStopped } from '../../adapters/redis/upgrade.js';
import { StoreUnavailable, type Store } from '../../adapters/types.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/**
 * What a start that fails says, once Redis was reached: the start's own deadline ("no answer within
 * 10 s") only when nothing answered in time; a command refused or timed out while starting says
 * which; an upgrade of an older store format that stops says so, keeps what moved, and the next
 * start finishes it. And an upgrade that takes longer than the start's deadline is not cut by it.
 */
describe('Redis store: what a failed start says', () => {
  it.each([
    ['connection', 'the connection was lost'],
    ['timeout', 'a command got no answer within 250 ms (store.commandTimeoutMs)'],
    ['cluster', 'the cluster does not serve every slot (a master is down or its slots are moving)'],
    ['loading', 'Redis is still loading its data from disk'],
    ['busy', 'Redis is busy running a script'],
    ['read-only', 'it is a read-only replica (connect to the master)'],
    ['refused', 'Redis refuses writes (out of memory, a failed snapshot or too few replicas)'],
    ['something-new', 'something-new'],
  ])('a store unavailable for %s, in words: %s', (reason, words) => {
    expect(unavailableWords(new StoreUnavailable(reason), 250)).toBe(words);
  });

  it('the start\'s own deadline passed: "no answer within 10 s"', () => {
    expect(startFailure({ url: 'redis://u:secret@h:1' }, new StartDeadlinePassed(), [new Error('Connection is closed.')])).toBe('cannot connect to Redis at h:1: no answer within 10 s');
  });

  it('a command refused or timed out while starting: "cannot start on", with the reason in words and the command timeout told', () => {
    expect(startFailure({ url: 'redis://h:1', commandTimeoutMs: 750 }, new StoreUnavailable('timeout'), [])).toBe(
      'cannot start on Redis at h:1: a command got no answer within 750 ms (store.commandTimeoutMs)',
    );
    expect(startFailure({ url: 'redis://h:1' }, new StoreUnavailable('timeout'), [])).toBe(
      'cannot start on Redis at h:1: a command got no answer within 500 ms (store.commandTimeoutMs)',
    );
  });

  it('an upgrade stopped by anything else says what Redis said', () => {
    expect(new StoreUpgradeStopped('Redis at h:1', new Error('NOPERM this user has no permissions to run the scan command'), 500).message).toBe(
      'Redis at h:1: the upgrade of the store from format 1 to format 2 stopped (NOPERM this user has no permissions to run the scan command); what moved is kept, and the next start goes on from there',
    );
    expect(new StoreUpgradeStopped('Redis at h:1', 'odd', 500).message).toContain('stopped (odd);');
  });

  describe('against a real Redis', () => {
    let redis: RedisServer;
    let inspect: Redis;
    let proxy: TcpProxy | undefined;
    const opened: Store[] = [];
    let prefixes = 0;
    const prefix = () => `s${(prefixes += 1)}:`;

    /** The error a start ends with; a store that starts all the same is closed after the test. */
    async function startFailing(options: RedisStoreOptions): Promise<unknown> {
      try {
        opened.push(await createRedisStore(options));
        return undefined;
      } catch (error) {
        return error;
      }
    }

    /** `count` records as format 1 kept them (0.1.0: no format key), spread over 7 groups. */
    async function writeFormat1(keyPrefix: string, count: number): Promise<void> {
      const pipeline = inspect.pipeline();
      for (let at = 0; at < count; at += 1) {
        pipeline.hset(`${keyPrefix}rec:{records}:client:c${at}`, 'g', `t${at % 7}`, 'v', JSON.stringify({ id: `c${at}` }), 'n', '2');
        pipeline.sadd(`${keyPrefix}idx:{records}:client:t${at % 7}`, `c${at}`);
      }
      await pipeline.exec();
    }

    async function expectAllMoved(keyPrefix: string, count: number): Promise<void> {
      const store = await createRedisStore({ url: redis.url, keyPrefix });
      opened.push(store);
      let listed = 0;
      for (let group = 0; group < 7; group += 1) listed += (await store.records.ids('client', `t${group}`)).length;
      expect(listed).toBe(count);
      expect(await store.records.getVersioned('client', `c${count - 1}`)).toEqual({ value: { id: `c${count - 1}` }, revision: 2 });
      expect(await inspect.keys(`${keyPrefix}rec:{records}:*`)).toEqual([]);
      expect(await inspect.get(`${keyPrefix}format:{records}`)).toBe('2');
    }

    beforeAll(async () => {
      redis = await startRedis();
      inspect = redis.client();
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await proxy?.close();
      proxy = undefined;
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('a Redis that stops answering during the upgrade: said as the upgrade stopping on a command\'s timeout; the next start finishes it, nothing lost', async () => {
      const keyPrefix = prefix();
      await writeFormat1(keyPrefix, 200);
      proxy = await startTcpProxy(redis.port);
      const silenced = proxy.dropReplyTo((chunk) => /\bhmget\b/i.test(chunk.toString()), { close: false });
      const started = performance.now();
      const error = await startFailing({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix, commandTimeoutMs: 300 });
      await silenced;
      expect(error).toBeInstanceOf(StoreStartError);
      expect((error as Error).message).toBe(
        `Redis at 127.0.0.1:${proxy.port}: the upgrade of the store from format 1 to format 2 stopped (a command got no answer within 300 ms (store.commandTimeoutMs)); what moved is kept, and the next start goes on from there`,
      );
      // Told at the command's timeout (about twice it at most), not at the start's 10 s.
      expect(performance.now() - started).toBeLessThan(2000);
      await expectAllMoved(keyPrefix, 200);
    });

    it('a connection lost during the upgrade: said as such; the next start finishes it, nothing lost', async () => {
      const keyPrefix = prefix();
      await writeFormat1(keyPrefix, 200);
      proxy = await startTcpProxy(redis.port);
      const dropped = proxy.dropReplyTo((chunk) => /\bhmget\b/i.test(chunk.toString()));
      const error = await startFailing({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix });
      await dropped;
      expect(error).toBeInstanceOf(StoreUpgradeStopped);
      expect((error as Error).message).toBe(
        `Redis at 127.0.0.1:${proxy.port}: the upgrade of the store from format 1 to format 2 stopped (the connection was lost); what moved is kept, and the next start goes on from there`,
      );
      await expectAllMoved(keyPrefix, 200);
    });

    it('an upgrade that takes longer than the start\'s 10 s goes on to its end (each command under its own timeout)', async () => {
      const keyPrefix = prefix();
      // A distant Redis: every reply 40 ms late. Moving 3,000 records, MOVES_AT_ONCE at a time, with
      // four round trips each, takes about 3000 / 32 * 4 * 40 ms = 15 s.
      const count = 3000;
      expect(MOVES_AT_ONCE).toBe(32);
      await writeFormat1(keyPrefix, count);
      proxy = await startTcpProxy(redis.port);
      proxy.delayReplies(40);
      const started = performance.now();
      const store = await createRedisStore({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix });
      opened.push(store);
      expect(performance.now() - started).toBeGreaterThan(10_000);
      await expectAllMoved(keyPrefix, count);
    }, 60_000);

    describe('a replica', () => {
      let replica: RedisServer;
      beforeAll(async () => {
        // Redis waits 5 s before the first sync by default (for more replicas to join it).
        await inspect.config('SET', 'repl-diskless-sync-delay', '0');
        replica = await startRedis(['--replicaof', '127.0.0.1', String(redis.port)]);
      });
      afterAll(async () => {
        await replica?.stop();
      });

      it.each([
        ['an empty store', false],
        // It would start, say it is ready, and refuse every write: every sign-in a 503.
        ['a store in use (its format and epoch there)', true],
      ])('of %s: refused at once, said as a read-only replica, not as "no answer within 10 s"', async (_name, inUse) => {
        const keyPrefix = prefix();
        if (inUse) {
          opened.push(await createRedisStore({ url: redis.url, keyPrefix }));
          const onReplica = replica.client();
          for (let tries = 0; tries < 100 && (await onReplica.get(`${keyPrefix}format:{records}`)) !== '2'; tries += 1) await new Promise((resolve) => setTimeout(resolve, 20));
          expect(await onReplica.get(`${keyPrefix}format:{records}`)).toBe('2');
        }
        const started = performance.now();
        const error = await startFailing({ url: replica.url, keyPrefix });
        expect(error).toBeInstanceOf(StoreStartError);
        expect((error as Error).message).toBe(`cannot start on Redis at 127.0.0.1:${replica.port}: it is a read-only replica (connect to the master)`);
        expect(performance.now() - started).toBeLessThan(2000);
      });

      it('a Redis that refuses ROLE (an ACL) is let through: a master starts', async () => {
        await inspect.call('ACL', 'SETUSER', 'norole', 'on', '>norole-pw', '~*', '&*', '+@all', '-role');
        try {
          const store = await createRedisStore({ url: `redis://norole:norole-pw@127.0.0.1:${redis.port}`, keyPrefix: prefix() });
          opened.push(store);
          await store.records.put('client', 'c1', 'acme', { id: 'c1' });
          expect(await store.records.get('client', 'c1')).toEqual({ id: 'c1' });
        } finally {
          await inspect.call('ACL', 'DELUSER', 'norole');
        }
      });
    });

    it.each([
      [undefined, 2],
      [1000, 4],
    ])('a Redis that accepts the connection but never answers (command timeout %s ms): said at the socket timeout, %s s', async (commandTimeoutMs, seconds) => {
      proxy = await startTcpProxy(redis.port);
      // Silent from its first command on (the connection's first chunk is ioredis' first command).
      const silenced = proxy.dropReplyTo(() => true, { close: false });
      const started = performance.now();
      const error = await startFailing({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix(), commandTimeoutMs });
      await silenced;
      expect(error).toBeInstanceOf(StoreStartError);
      expect((error as Error).message).toBe(`cannot connect to Redis at 127.0.0.1:${proxy.port}: connected, but nothing answered within ${seconds} s`);
      expect(performance.now() - started).toBeGreaterThanOrEqual(seconds * 1000 - 100);
    }, 30_000);
  });
});
