/*
 * The Lua scripts of the Redis store, and the client type that has them. Each script is one step
 * that must not be split by another client's command (single use, compare-and-set, a record and
 * its change together, several counters at once); Redis runs a script whole, so no other command
 * lands in the middle. ioredis defines them as commands on the client (`scripts: SCRIPTS`), sent
 * by hash and reloaded by itself when Redis has forgotten them. Each script keeps its keys in one
 * slot (see the key layout in index.ts), as Redis Cluster requires.
 */
import type { Cluster, Redis } from 'ioredis';

/* Creates or replaces an entry's payload; a consumed mark it has stays (single use survives a re-save). */
const UPSERT = `
redis.call('HSET', KEYS[1], 'p', ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
return 1`;

/*
 * An entry and the Grant entry its payload names (ARGV[1]: the Grant keys' prefix), in one step: a
 * code or refresh token is always followed by a read of its grant. Not on Redis Cluster, where the
 * grant's key is in another slot (the grant is then read on its own). The id is matched in the JSON
 * (engine ids are URL-safe: no quote or backslash), and checked against the parsed payload.
 */
const READ_WITH_GRANT = `
local entry = redis.call('HMGET', KEYS[1], 'p', 'c')
if not entry[1] then return {false, false, false, false} end
local grantId = string.match(entry[1], '"grantId":"([%w%-_]+)"')
if not grantId then return {entry[1], entry[2], false, false} end
local grant = redis.call('HMGET', ARGV[1] .. '{' .. grantId .. '}', 'p', 'c')
return {entry[1], entry[2], grant[1], grant[2]}`;

/*
 * Single use: HSETNX sets the consumed mark only if none is there, in one step; gone = used up. A
 * consumed entry then lives at least ARGV[2] ms (CONSUMED_ENTRY_MIN_SECONDS), so that its request's
 * confirmation still finds it, with any replay mark on it.
 */
const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local set = redis.call('HSETNX', KEYS[1], 'c', ARGV[1])
if set == 1 then
  local left = redis.call('PTTL', KEYS[1])
  if left >= 0 and left < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return set`;

/*
 * A code's exchange, or a refresh token's rotation, in one step: the entry consumed (as CONSUME),
 * a code confirmed (ARGV[3] = '1', as CONFIRM), and, when KEYS[2] is given, the refresh token the
 * request issues written there (as UPSERT: ARGV[4] its payload, ARGV[5] its time to live).
 * Nothing is written when the entry was consumed before or is gone (0): no other request ever sees
 * the entry consumed without its refresh token, nor a code consumed but not yet confirmed. Not on
 * Redis Cluster (the token is in another slot).
 */
const CONSUME_COMPLETING = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'c', ARGV[1]) == 0 then return 0 end
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'd', ARGV[1]) end
local left = redis.call('PTTL', KEYS[1])
if left >= 0 and left < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if KEYS[2] then
  redis.call('HSET', KEYS[2], 'p', ARGV[4])
  local ttl = tonumber(ARGV[5])
  if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) else redis.call('PERSIST', KEYS[2]) end
end
return 1`;

/*
 * The request that consumed the entry completed; an entry that is gone stays gone. Answers 1 when
 * the entry was marked replayed before (MARK_REPLAYED), in the same step: read and write cannot be
 * split by a replay's mark.
 */
const CONFIRM = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[1])
if redis.call('HEXISTS', KEYS[1], 'r') == 1 then return 1 end
return 0`;

/*
 * Undoes a consumption (its request failed before answering), unless the entry was marked replayed
 * meanwhile: a replay has ended what it issued, and the entry must stay used up.
 */
const UNCONSUME = `
if redis.call('HEXISTS', KEYS[1], 'r') == 1 then return 0 end
return redis.call('HDEL', KEYS[1], 'c', 'd')`;

/* A consumed entry presented again: marked for as long as it lives; one that is gone stays gone. */
const MARK_REPLAYED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], 'r', ARGV[1])`;

/* Compare-and-set: write only if the record is still at the revision the caller read. */
const REPLACE_RECORD = `
local revision = redis.call('HGET', KEYS[1], 'n')
if not revision or revision ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'n', tonumber(revision) + 1)
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;

/*
 * Creates a record only where none is, with its change, in one step: {1}. Its index entry is
 * written by the caller first (another slot on a cluster): ARGV[3] is the token both hold. When
 * there is one already: {0, its group, its token}.
 */
const CREATE_RECORD = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  local found = redis.call('HMGET', KEYS[1], 'g', 't')
  return {0, found[1], found[2]}
end
redis.call('HSET', KEYS[1], 'g', ARGV[1], 'v', ARGV[2], 'n', 1, 't', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return {1}`;

/* Creates or overwrites a record (token ARGV[3]), with its change; answers its group and token before. */
const PUT_RECORD = `
local previous = redis.call('HMGET', KEYS[1], 'g', 't')
redis.call('HSET', KEYS[1], 'g', ARGV[1], 'v', ARGV[2], 't', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('PUBLISH', ARGV[4], ARGV[5])
return previous`;

/* Deletes a record with its change; answers its group and token, or nil when there was none. */
const DELETE_RECORD = `
local found = redis.call('HMGET', KEYS[1], 'g', 't')
if not found[1] then return false end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return found`;

/*
 * Removes an ID from an index (or gives its entry the token ARGV[3]) only if the entry still holds
 * the token ARGV[2]: a record created again meanwhile wrote a token of its own there, which stays.
 */
const UNINDEX_RECORD = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return redis.call('HDEL', KEYS[1], ARGV[1])`;

/* Store format 1 to 2: a record copied to its own key unless there already; answers its token there. */
const COPY_RECORD = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'g', ARGV[1], 'v', ARGV[2], 'n', ARGV[3], 't', ARGV[4])
end
return redis.call('HGET', KEYS[1], 't')`;

/* The value there becomes ARGV[2] only if it is ARGV[1] (the store format, once upgraded). */
const SET_IF = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

/* Fixed windows: the first increment sets the expiry, later ones keep it. Answers count, ms left. */
const INCREMENT_COUNTERS = `
local window = tonumber(ARGV[1])
local answer = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local left = redis.call('PTTL', key)
  if left < 0 then
    redis.call('PEXPIRE', key, window)
    left = window
  end
  answer[2 * i - 1] = count
  answer[2 * i] = left
end
return answer`;

const PEEK_COUNTERS = `
local answer = {}
for i, key in ipairs(KEYS) do
  answer[2 * i - 1] = tonumber(redis.call('GET', key) or '0')
  answer[2 * i] = redis.call('PTTL', key)
end
return answer`;

/*
 * The value there, or ARGV[1] written when there is none, in one step: the store's epoch (none: an
 * emptied store) and its format (none: an empty store), so that instances starting together agree.
 */
const GET_OR_SET = `
local found = redis.call('GET', KEYS[1])
if found then return found end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`;

/* The value there becomes ARGV[1]; answers what it was (nil: none). A cluster master's epoch marker. */
const SWAP = `
local found = redis.call('GET', KEYS[1])
if found ~= ARGV[1] then redis.call('SET', KEYS[1], ARGV[1]) end
return found`;

/** The scripts as ioredis defines them on a client (`scripts` option): name, key count, Lua. */
export const SCRIPTS = {
  taUpsert: { numberOfKeys: 1, lua: UPSERT },
  taConsume: { numberOfKeys: 1, lua: CONSUME },
  taUnconsume: { numberOfKeys: 1, lua: UNCONSUME },
  taReadWithGrant: { numberOfKeys: 1, lua: READ_WITH_GRANT },
  taConfirm: { numberOfKeys: 1, lua: CONFIRM },
  taConsumeCompleting: { lua: CONSUME_COMPLETING },
  taMarkReplayed: { numberOfKeys: 1, lua: MARK_REPLAYED },
  taDeleteRecord: { numberOfKeys: 1, lua: DELETE_RECORD },
  taCreateRecord: { numberOfKeys: 1, lua: CREATE_RECORD },
  taPutRecord: { numberOfKeys: 1, lua: PUT_RECORD },
  taUnindexRecord: { numberOfKeys: 1, lua: UNINDEX_RECORD },
  taCopyRecord: { numberOfKeys: 1, lua: COPY_RECORD },
  taSetIf: { numberOfKeys: 1, lua: SET_IF },
  taReplaceRecord: { numberOfKeys: 1, lua: REPLACE_RECORD },
  taIncrementCounters: { lua: INCREMENT_COUNTERS },
  taPeekCounters: { lua: PEEK_COUNTERS },
  taGetOrSet: { numberOfKeys: 1, lua: GET_OR_SET },
  taSwap: { numberOfKeys: 1, lua: SWAP },
};

/** The commands the scripts add to a client, as ioredis defines them. */
export interface Scripts {
  taUpsert(key: string, payload: string, ttl: number): Promise<number>;
  taConsume(key: string, now: number, minimumLifeMs: number): Promise<number>;
  taUnconsume(key: string): Promise<number>;
  /** [payload, consumed, grant payload, grant consumed], null where absent. */
  taReadWithGrant(key: string, grantKeyPrefix: string): Promise<Array<string | null>>;
  /** taConsumeCompleting(1, entry, now, minimumLifeMs, confirm) or (2, entry, token, now, minimumLifeMs, confirm, payload, ttl): 0 when consumed before or gone. */
  taConsumeCompleting(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
  /** 1 when the entry was marked replayed before. */
  taConfirm(key: string, now: number): Promise<number>;
  taMarkReplayed(key: string, now: number): Promise<number>;
  /** The deleted record's [group, token], or null when there was none. */
  taDeleteRecord(key: string, channel: string, change: string): Promise<[string, string | null] | null>;
  /** [1] when created; [0, group, token] of the record there already. */
  taCreateRecord(key: string, group: string, value: string, token: string, channel: string, change: string): Promise<[1] | [0, string | null, string | null]>;
  /** The record's [group, token] before, null where there was none. */
  taPutRecord(key: string, group: string, value: string, token: string, channel: string, change: string): Promise<[string | null, string | null]>;
  /** Removes the entry, or gives it `replacement`, only if it holds `token`. */
  taUnindexRecord(indexKey: string, id: string, token: string, replacement?: string): Promise<number>;
  /** The token of the record at `key` after the copy (its own when it was there already). */
  taCopyRecord(key: string, group: string, value: string, revision: string, token: string): Promise<string>;
  taSetIf(key: string, expected: string, value: string): Promise<number>;
  taReplaceRecord(key: string, revision: string, value: string, channel: string, change: string): Promise<number>;
  /** taIncrementCounters(numberOfKeys, ...keys, windowMs) */
  taIncrementCounters(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
  /** taPeekCounters(numberOfKeys, ...keys) */
  taPeekCounters(numberOfKeys: number, ...keys: string[]): Promise<number[]>;
  taGetOrSet(key: string, candidate: string): Promise<string>;
  /** What was there (null: nothing), now replaced by `value`. */
  taSwap(key: string, value: string): Promise<string | null>;
}

/** A client of a single node, a Sentinel-managed master or a cluster, with the scripts defined. */
export type Client = (Redis | Cluster) & Scripts;
