/*
 * The Redis store as the `store` option states it: where Redis is (one node's URL, a Redis Cluster
 * or a Sentinel-managed master, with credentials and TLS), the key prefix and the command timeout.
 * This schema is the one statement of those settings: createAuthServer validates the option with
 * it (src/options.ts composes it), the store's own types are derived from it, and the option
 * reference in docs/configuration.md is generated from it. No ioredis here, so that the option
 * schema loads without the client.
 */
import { z } from 'zod';
import { databaseIndexProblem } from './url.js';

/** The key prefix when the option gives none. */
export const DEFAULT_KEY_PREFIX = 'talent-auth:';
/** How long a store operation may wait for Redis when the option gives no `commandTimeoutMs`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 500;

const redisUrl = z
  .string()
  .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
  .superRefine((url, ctx) => {
    const problem = databaseIndexProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** TLS towards Redis, in PEM text; `tls: true` is TLS with the system's CAs. */
const tlsSettings = z
  .object({
    ca: z.string().optional(),
    cert: z.string().optional(),
    key: z.string().optional(),
    servername: z.string().optional(),
    rejectUnauthorized: z.boolean().optional(),
  })
  .strict();

/**
 * What every connection mode shares: the ACL user and AUTH password (a URL may carry them
 * instead; secrets never appear in errors or logs) and TLS (with Sentinel, to the sentinels too).
 */
const sharedSettings = z.object({
  username: z.string().optional(),
  password: z.string().optional(),
  tls: z.union([z.boolean(), tlsSettings]).optional(),
});

/** Some nodes of a Redis Cluster; the others are discovered. */
const clusterSettings = z.object({ nodes: z.array(redisUrl).min(1, 'at least one node') }).strict();

/** A master that Redis Sentinel manages (`sentinel monitor <name> ...`), and the sentinels' own credentials. */
const sentinelSettings = z
  .object({
    sentinels: z
      .array(z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) }).strict())
      .min(1, 'at least one sentinel'),
    name: z.string().min(1),
    username: z.string().optional(),
    password: z.string().optional(),
  })
  .strict();

/** The Redis store of the `store` option: `{ type: 'redis' }`, exactly one place where Redis is, and the shared settings. */
export const redisStoreSchema = z
  .object({
    type: z.literal('redis'),
    url: redisUrl.optional(),
    cluster: clusterSettings.optional(),
    sentinel: sentinelSettings.optional(),
    ...sharedSettings.shape,
    keyPrefix: z.string().optional(),
    commandTimeoutMs: z.number().int().min(50).max(10_000).optional(),
  })
  .strict()
  .refine(
    (store) => [store.url, store.cluster, store.sentinel].filter((given) => given !== undefined).length === 1,
    'give exactly one of url, cluster or sentinel',
  );

/** TLS towards Redis (PEM text); `true` means TLS with the system's CAs. */
export type RedisTlsSettings = z.input<typeof tlsSettings>;
/** Settings shared by every connection mode. Secrets here never appear in errors or logs. */
export type RedisSharedSettings = z.input<typeof sharedSettings>;
/** A Redis Cluster to connect to. */
export type RedisClusterSettings = z.input<typeof clusterSettings>;
/** A master that Redis Sentinel manages, found by asking the sentinels. */
export type RedisSentinelSettings = z.input<typeof sentinelSettings>;

/**
 * Where Redis is: exactly one of a single node's URL, a Redis Cluster, or a Sentinel-managed
 * master (the schema's refinement, said in the type so that a host's editor says it too).
 */
export type RedisConnectionOptions = RedisSharedSettings & (
  | { url: string; cluster?: never; sentinel?: never }
  | { cluster: RedisClusterSettings; url?: never; sentinel?: never }
  | { sentinel: RedisSentinelSettings; url?: never; cluster?: never }
);

/** The Redis store as the `store` option takes it: a connection plus key prefix and command timeout. */
export type RedisStoreOption = { type: 'redis' } & Pick<z.input<typeof redisStoreSchema>, 'keyPrefix' | 'commandTimeoutMs'> & RedisConnectionOptions;
