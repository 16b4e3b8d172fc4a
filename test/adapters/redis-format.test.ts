import { STORE_FORMAT, StoreFormatError, StoreStartError, createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { openRedisStore } from '../../src/cli/store.js';
import { parseCommandLine } from '../../src/cli/args.js';
import { ConnectionError } from '../../src/cli/errors.js';
import { StoreFormatError as ExportedStoreFormatError, createAuthServer } from '../../src/index.js';
import { capturingLogger, demoApis } from '../support/fixtures.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The store format: an empty store gets the current format written at start, a store of that
 * format starts, and a store of a newer format, or holding no format at all, is refused at start
 * with a message that says what was found, what this release reads and where to read what to do,
 * before anything is written.
 */
describe('Redis store: the store format is checked at start', () => {
  let redis: RedisServer;
  const opened: Store[] = [];
  let prefixes = 0;
  const prefix = () => `f${(prefixes += 1)}:`;
  const open = async (keyPrefix: string, settings: { heartbeatMs?: number } = {}) => {
    const store = await createRedisStore({ url: redis.url, keyPrefix, ...settings });
    opened.push(store);
    return store;
  };
  /** Every key under the prefix, sorted. */
  const keysOf = async (keyPrefix: string) => (await redis.client().keys(`${keyPrefix}*`)).sort();

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('writes the current format into an empty store, in the records\' slot', async () => {
    const keyPrefix = prefix();
    await open(keyPrefix);
    expect(STORE_FORMAT).toBe(2);
    expect(await redis.client().get(`${keyPrefix}format:{records}`)).toBe('2');
  });

  it('starts on a store of its format, and on one whose format key went', async () => {
    const keyPrefix = prefix();
    const first = await open(keyPrefix);
    await first.records.put('client', 'c1', 'acme', { id: 'c1' });
    await first.close();
    const again = await open(keyPrefix);
    expect(await again.records.get('client', 'c1')).toEqual({ id: 'c1' });
    await again.close();

    // The key gone (an operator's mistake): nothing of format 1 to move, and nothing lost.
    await redis.client().del(`${keyPrefix}format:{records}`);
    const old = await open(keyPrefix);
    expect(await old.records.get('client', 'c1')).toEqual({ id: 'c1' });
    expect(await old.records.list('client', 'acme')).toEqual([{ id: 'c1' }]);
    expect(await redis.client().get(`${keyPrefix}format:{records}`)).toBe('2');
  });

  it('refuses a store of a newer format, says what to do, and writes nothing', async () => {
    const keyPrefix = prefix();
    await redis.client().set(`${keyPrefix}format:{records}`, '3');
    const before = await keysOf(keyPrefix);
    const error = await open(keyPrefix).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreFormatError);
    expect(error).toBeInstanceOf(StoreStartError);
    expect(error).toBeInstanceOf(ExportedStoreFormatError);
    const refused = error as StoreFormatError;
    expect(refused.message).toBe(
      `Redis at 127.0.0.1:${redis.port}: the store format key ${keyPrefix}format:{records} says format 3 (written by a newer release of talent-auth), `
      + 'and this release of talent-auth reads store format 2 only. Nothing was written. Run a release that reads format 3, '
      + 'or restore the store from a backup taken before the upgrade: docs/versioning.md, "Upgrading"',
    );
    expect([refused.found, refused.supported]).toEqual(['3', 2]);
    // No epoch, no subscription, the format key as it was.
    expect(await keysOf(keyPrefix)).toEqual(before);
    expect(await redis.client().get(`${keyPrefix}format:{records}`)).toBe('3');
  });

  it.each([
    ['a word', 'hello', '"hello"'],
    ['zero', '0', '"0"'],
    ['a decimal', '1.0', '"1.0"'],
    ['a padded number', ' 1', '" 1"'],
    ['a long value (cut in the message)', 'x'.repeat(500), `"${'x'.repeat(40)}..."`],
  ])('refuses a format key holding %s, clearly', async (_case, value, shown) => {
    const keyPrefix = prefix();
    await redis.client().set(`${keyPrefix}format:{records}`, value);
    const error = await open(keyPrefix).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreFormatError);
    expect((error as Error).message).toBe(
      `Redis at 127.0.0.1:${redis.port}: the store format key ${keyPrefix}format:{records} holds ${shown}, which is no store format (a whole number); `
      + 'this release of talent-auth reads store format 2. Another application may use the same key prefix: give each its own '
      + '(store.keyPrefix), and see docs/versioning.md, "Upgrading"',
    );
    expect(await redis.client().get(`${keyPrefix}format:{records}`)).toBe(value);
  });

  it('refuses a format key of another type (a hash), clearly', async () => {
    const keyPrefix = prefix();
    await redis.client().hset(`${keyPrefix}format:{records}`, 'v', '1');
    const error = await open(keyPrefix).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreFormatError);
    expect((error as Error).message).toMatch(/^Redis at 127\.0\.0\.1:\d+: the store format key f\d+:format:\{records\} holds a value that is not a string, which is no store format/);
    expect(await redis.client().hget(`${keyPrefix}format:{records}`, 'v')).toBe('1');
  });

  it('two instances starting on an empty store together agree on the format', async () => {
    const keyPrefix = prefix();
    await Promise.all([open(keyPrefix), open(keyPrefix), open(keyPrefix)]);
    expect(await redis.client().get(`${keyPrefix}format:{records}`)).toBe('2');
  });

  it('writes the format again into a store emptied while running', async () => {
    const keyPrefix = prefix();
    const store = await open(keyPrefix, { heartbeatMs: 50 });
    let emptied = 0;
    store.onEmptied(() => (emptied += 1));
    await redis.client().del(`${keyPrefix}format:{records}`, `${keyPrefix}epoch:{records}`);
    for (let waited = 0; emptied === 0 && waited < 3000; waited += 20) await sleep(20);
    expect(emptied).toBe(1);
    for (let waited = 0; (await redis.client().exists(`${keyPrefix}format:{records}`)) === 0 && waited < 1000; waited += 20) await sleep(20);
    expect(await redis.client().get(`${keyPrefix}format:{records}`)).toBe('2');
  });

  it('createAuthServer() and the CLI refuse a newer store with the same sentence', async () => {
    const keyPrefix = prefix();
    await redis.client().set(`${keyPrefix}format:{records}`, '7');
    const sentence = /says format 7 \(written by a newer release of talent-auth\), and this release of talent-auth reads store format 2 only/;
    const server = createAuthServer({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, logger: capturingLogger().logger, store: { type: 'redis', url: redis.url, keyPrefix } });
    await expect(server).rejects.toThrow(StoreFormatError);
    await expect(server).rejects.toThrow(sentence);
    const cli = openRedisStore(parseCommandLine(['apps', 'list', '--redis', redis.url, '--key-prefix', keyPrefix]), { env: {}, cwd: process.cwd() });
    await expect(cli).rejects.toThrow(ConnectionError);
    await expect(cli).rejects.toThrow(sentence);
    expect(await keysOf(keyPrefix)).toEqual([`${keyPrefix}format:{records}`]);
  });
});
