/*
 * THE OPTIONS of createAuthServer, validated once. The zod schema below is their one statement:
 * its checks are the bounds, its defaults the defaults, its `.meta({ description })` the words of
 * the option reference in docs/configuration.md (generated from it by src/options-reference.ts; a
 * test keeps them equal), and the public types (AuthServerOptions, ResolvedOptions) are derived
 * from it. A feature that owns an option states it beside its code (the Redis store, the audit
 * trail, the portal, the pages' languages and branding, back-channel logout's private hosts); this
 * module composes them. Lifetimes take their numbers from policies/lifetimes.ts.
 */
import { z } from 'zod';
import type { AccountStore, HostSecondFactor, TenantDisplayName } from './accounts.js';
import type { ApiDefinition } from '../policies/catalog.js';
import { i18nOptionSchema } from './i18n/localizer.js';
import { languageTagSchema } from './i18n/locale.js';
import { portalOptionSchema } from './portal/options.js';
import { brandingOptionSchema } from './pages/branding.js';
import type { Logger } from './logger.js';
import { keyAlgorithm, type PrivateJwks, type SigningAlgorithm } from './engine/keys.js';
import type { ExternalSigner } from './engine/signing-keys.js';
import { DEFAULT_ROTATION_WAITS } from './engine/stored-keys.js';
import type { TenantPolicyFunction } from '../policies/tenant-policy.js';
import { auditOptionSchema, onAuditEventOptionSchema } from './audit/options.js';
import { factorKeysOptionSchema } from './factors/options.js';
import { federationOptionSchema } from './federation/options.js';
import { DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_KEY_PREFIX, redisStoreSchema, type RedisStoreOption } from '../adapters/redis/options.js';
import { MANAGEMENT_SCOPE } from '../policies/management.js';
import { privateHostsSchema } from '../policies/backchannel-logout.js';
import { OIDC_SCOPES } from '../policies/scopes.js';
import {
  GRANT_IDLE,
  MANAGEMENT_ACCESS_TOKEN,
  SESSION,
  NAMED_USER_ACCESS_TOKEN,
  REFRESH_TOKEN_REUSE_WINDOW,
  type LifetimeBounds,
} from '../policies/lifetimes.js';
import { checkedAs, functionOf, httpUrlWithoutTrailingSlash } from './option-kinds.js';

export type { RedisStoreOption };

const identifier = z
  .string()
  .max(32, 'must be at most 32 characters')
  .regex(/^[a-z][a-z0-9_.-]*$/i, 'must start with a letter and hold letters, digits, _ . -');

/** The longest scope name of the catalog. */
const MAX_SCOPE_NAME_LENGTH = 64;
/** The scope claim of the largest token: every scope of the catalog, and ours (docs: "Limits"). */
const MAX_SCOPE_CLAIM_BYTES = 2048;

/** What a scope allows: English words, or words per language (English required). */
const scopeWordsSchema = checkedAs<string | ({ en: string } & Record<string, string>)>(z.union([
  z.string(),
  z
    .record(languageTagSchema, z.string().min(1))
    .refine((words) => typeof words.en === 'string', 'needs English words (en) besides the other languages'),
]));

const apiSchema = z
  .object({
    id: identifier,
    name: z.string().min(1),
    scopes: z
      .record(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'scope names are RFC 6749 scope tokens'), scopeWordsSchema)
      .refine((scopes) => Object.keys(scopes).length > 0, 'an API needs at least one scope'),
    constraints: z.array(identifier).max(8, 'at most 8 constraint dimensions').default([]),
  })
  .strict();

/** Scopes the server defines itself: no API of the catalog may define them too. */
const RESERVED_SCOPES: ReadonlySet<string> = new Set([...OIDC_SCOPES, MANAGEMENT_SCOPE]);

/** The memory store, or the Redis store (adapters/redis/options.ts). */
const storeSchema = checkedAs<{ type: 'memory' } | RedisStoreOption>(
  z.discriminatedUnion('type', [z.object({ type: z.literal('memory') }).strict(), redisStoreSchema]),
);

/** A configurable lifetime in seconds, within its bounds and with its default (policies/lifetimes.ts). */
const seconds = (bounds: LifetimeBounds) => z.number().int().min(bounds.min).max(bounds.max).default(bounds.default);

const bytes = z.number().int().min(1024).max(1024 * 1024);

const windowLimit = z
  .object({ max: z.number().int().min(1).max(100_000), windowSeconds: z.number().int().min(1).max(86_400) })
  .strict();

const algorithms = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const satisfies readonly SigningAlgorithm[];

/** A key whose private part stays outside the server (src/engine/signing-keys.ts, ExternalSigner). */
const externalSignerSchema = checkedAs<ExternalSigner>(z.object({
  kid: z.string().min(1).max(200),
  alg: z.enum(algorithms),
  publicKey: z.record(z.string(), z.unknown())
    .refine((jwk) => !['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((member) => member in jwk), 'must be a public key: the private part stays with the signer'),
  sign: functionOf<ExternalSigner['sign']>('a function (data: Uint8Array) => Promise<Uint8Array>'),
}).refine((signer) => keyAlgorithm(signer.publicKey, 0, [signer.alg]) === signer.alg, { message: 'publicKey is not a key of its alg', path: ['publicKey'] }));

/** The key set kept in the store (src/engine/stored-keys.ts). */
const storedKeysSchema = z.object({
  keks: z.array(z.string().min(32, 'key-encryption keys need at least 32 characters')).min(1),
  publishWaitSeconds: z.number().int().min(0).max(86_400).default(DEFAULT_ROTATION_WAITS.publishWaitSeconds),
  retireWaitSeconds: z.number().int().min(0).max(31 * 86_400).default(DEFAULT_ROTATION_WAITS.retireWaitSeconds),
});

/** A tenant's display name (`tenantDisplayName` option). */
export type { TenantDisplayName } from './accounts.js';

export const optionsSchema = z
  .object({
    baseUrl: httpUrlWithoutTrailingSlash.meta({
      description: 'public base address, `http(s)://host[:port][/path]`, no query; a trailing `/` is dropped. Every URL we '
        + "publish or redirect to is built from it, never from a request's `Host` or forwarded headers",
    }),
    pathPrefix: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*$/, "must be '' or start with '/' and not end with '/'")
      .default('')
      .meta({ description: 'prefix of every route; issuer = `{baseUrl}{pathPrefix}/oauth2`' }),
    store: storeSchema.default({ type: 'memory' }).meta({
      description: "or `{ type: 'redis', url | cluster: { nodes } | sentinel: { sentinels, name }, username?, password?, tls?, "
        + `keyPrefix?, commandTimeoutMs? }\` (\`keyPrefix\` default \`${DEFAULT_KEY_PREFIX}\`, \`commandTimeoutMs\` default `
        + `${DEFAULT_COMMAND_TIMEOUT_MS} ms); see [Stores](#stores)`,
    }),
    apis: z
      .array(apiSchema)
      .min(1, 'at least one API is required')
      .superRefine((apis, ctx) => {
        const ids = new Set<string>();
        const scopes = new Map<string, string>();
        for (const api of apis) {
          if (ids.has(api.id)) ctx.addIssue({ code: 'custom', message: `duplicate API id "${api.id}"` });
          ids.add(api.id);
          for (const scope of Object.keys(api.scopes)) {
            if (scope.length > MAX_SCOPE_NAME_LENGTH) {
              ctx.addIssue({ code: 'custom', message: `scope "${scope.slice(0, 20)}..." is longer than ${MAX_SCOPE_NAME_LENGTH} characters; scope names must be at most ${MAX_SCOPE_NAME_LENGTH} characters` });
            }
            if (RESERVED_SCOPES.has(scope)) {
              ctx.addIssue({ code: 'custom', message: `scope "${scope}" is reserved (OpenID Connect, or the management right)` });
            }
            const owner = scopes.get(scope);
            if (owner) ctx.addIssue({ code: 'custom', message: `scope "${scope}" is defined by both "${owner}" and "${api.id}"` });
            scopes.set(scope, api.id);
          }
        }
        const claim = [...scopes.keys(), ...RESERVED_SCOPES].join(' ');
        if (Buffer.byteLength(claim) > MAX_SCOPE_CLAIM_BYTES) {
          ctx.addIssue({ code: 'custom', message: `the scopes' names take ${Buffer.byteLength(claim)} bytes; a token carrying all of them must stay within ${MAX_SCOPE_CLAIM_BYTES}` });
        }
      })
      .meta({
        description: 'the API catalog: `{ id, name, scopes: { scope: words }, constraints?: [dimension] }` (`words` is English '
          + 'text, or text per language `{ en, de?, fr?, ... }` with `en` required, see [languages and branding](#languages-and-branding)); '
          + `ids unique, a scope belongs to exactly one API, scope names are RFC 6749 scope tokens of at most ${MAX_SCOPE_NAME_LENGTH} `
          + `characters, all of them together (with ours) at most ${MAX_SCOPE_CLAIM_BYTES.toLocaleString('en-US')} bytes `
          + '(see [limits](#limits)), none of them `manage.integrations` or an OpenID Connect scope',
      }),
    accounts: z
      .object({
        authenticate: functionOf<AccountStore['authenticate']>('a function'),
        findAccount: functionOf<AccountStore['findAccount']>('a function'),
        findByUsername: functionOf<NonNullable<AccountStore['findByUsername']>>('a function').optional(),
        secondFactor: z
          .object({
            has: functionOf<HostSecondFactor['has']>('a function of the user'),
            check: functionOf<HostSecondFactor['check']>('a function of the user and the code'),
          })
          .strict()
          .optional(),
        federate: functionOf<NonNullable<AccountStore['federate']>>('a function').optional(),
      })
      .optional()
      .meta({
        description: "the host platform's users (`AccountStore`: `authenticate({ username, password })`, `findAccount(sub)`, and "
          + 'optionally `findByUsername(username)`, the account a username signs in as, which lets a tenant\'s admin '
          + '[lift a sign-in hold](operations.md#sign-in-throttling) of her own users through the management API and the portal, '
          + 'and optionally `secondFactor: { has(user), check({ ...user, code }) }`, second factors the host keeps itself, '
          + 'see [the host\'s own second factors](#the-hosts-own-second-factors), and optionally `federate({ tenant, connection, claims })`, '
          + 'the account a sign-in through a tenant\'s identity provider signs in as, see [accounts of federated users](#accounts-of-federated-users)); '
          + 'without it nobody can sign in',
      }),
    keys: z
      .object({
        jwks: checkedAs<PrivateJwks>(z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) })).optional(),
        signers: z.array(externalSignerSchema).min(1).optional(),
        store: storedKeysSchema.optional(),
      })
      .refine((keys) => !(keys.jwks && keys.store), 'give keys.jwks or keys.store, not both')
      .refine((keys) => !(keys.signers && keys.store), 'external signers (keys.signers) change with the configuration: give them beside keys.jwks, not keys.store')
      .refine((keys) => new Set((keys.signers ?? []).map((signer) => signer.kid)).size === (keys.signers ?? []).length, 'keys.signers: each kid once')
      .optional()
      .meta({
        description: '`{ jwks }`, private JWKs in a file\'s order, or `{ store: { keks } }`, the key set kept in the store, sealed under '
          + 'the key-encryption keys and rotated live with the CLI, and/or `{ signers }`, keys whose private part stays in a KMS or '
          + 'HSM (its `publicKey` and an async `sign`); the keys must hold one for `accessTokenAlgorithm` and one for each of `idTokenAlgorithms` '
          + '(an RSA key for RS256 at least); the first key of each algorithm signs, later ones are only published (see '
          + '[keys](keys.md)). Absent: keys are generated per process with a loud warning (tokens stop verifying at restart)',
        absent: 'generated',
      }),
    audience: z.string().url().optional().meta({
      description: 'the `aud` of every access token (one audience for all platform APIs)',
      absent: '`{baseUrl}/api`',
    }),
    accessTokenAlgorithm: z.enum(algorithms).default('ES256').meta({ description: 'the algorithm that signs access tokens' }),
    idTokenAlgorithms: z
      .array(z.enum(algorithms))
      .min(1)
      .max(algorithms.length)
      // OpenID Connect's default: an app that names no algorithm gets RS256 ID tokens.
      .refine((listed) => listed.includes('RS256'), 'must include RS256 (the ID-token algorithm of every app that names none)')
      .default(['RS256'])
      .meta({
        description: 'the algorithms an app may register for its ID tokens (`idTokenSigningAlg`, on the wire '
          + '`id_token_signed_response_alg`): the server holds a signing key for each (generated with the other keys, or '
          + 'required in `keys.jwks`: a missing one fails the start naming it), and discovery lists them in '
          + '`id_token_signing_alg_values_supported`, together with any other algorithm the server has a key for (the '
          + "access-token algorithm's, say). The list must hold OpenID Connect's default (the default here), the algorithm "
          + 'of every app that names none. See [ID-token algorithms](keys.md#id-token-algorithms)',
      }),
    namedUserAccessTokenTtl: seconds(NAMED_USER_ACCESS_TOKEN).meta({
      description: 'lifetime of named-user access tokens, in seconds (we default to the shorter because a JWT already out lives '
        + 'until `exp` even after its consent is revoked, for APIs that verify locally; [introspection](endpoints.md#introspection) '
        + 'sees it at once); a [tenant policy](#per-tenant-policies) may set its own within the same bounds',
    }),
    managementAccessTokenTtl: seconds(MANAGEMENT_ACCESS_TOKEN).meta({
      description: 'lifetime of access tokens that carry the management right (`manage.integrations`), in seconds, whatever the '
        + 'named-user or tenant lifetime ([management API](management-api.md))',
    }),
    refreshTokenReuseWindowSeconds: seconds(REFRESH_TOKEN_REUSE_WINDOW).meta({
      description: 'a rotated refresh token presented again within this time, while its successor is unused, gets the same '
        + 'successor **once** instead of ending the grant (a client that lost the answer), recorded as `refresh_token.retried`; '
        + 'a second retry, or one after the window, is a reuse that ends the grant (0: only a rotation that never answered may '
        + "be retried). Okta's grace period is up to a minute (30 s by default), Auth0's reuse interval 0 by default. See "
        + '[retries and replays](operations.md#retries-and-replays)',
    }),
    grantIdleSeconds: seconds(GRANT_IDLE).meta({
      description: 'a grant nobody refreshed for this long ends (default: the refresh token lifetime plus the session lifetime); '
        + 'the consent stays',
    }),
    sessionTtl: seconds(SESSION).meta({
      description: 'how long a browser stays signed in here (the sign-in session), unless the user signs out; apps ask for the '
        + 'password sooner with `prompt=login` or `max_age` (every ID token carries `auth_time`). A sign-out ends the session '
        + 'on every instance at once ([sign-out](endpoints.md#sign-out))',
    }),
    cookieKeys: z
      .array(z.string().min(32, 'cookie keys need at least 32 characters'))
      .min(1)
      .optional()
      .meta({
        description: 'keys signing the sign-in cookies (newest first); the first also keys the derivation of refresh-token '
          + "successors and the sign-in throttle's username hints, so every instance needs the same; absent: one per process, "
          + 'with a warning (sign-ins then break at restart and across instances)',
        absent: 'generated',
      }),
    factorKeys: factorKeysOptionSchema,
    limits: z
      .object({
        tokenRequestBytes: bytes.default(16 * 1024).meta({ description: 'largest token request body; larger gets `413 invalid_request`' }),
        apiRequestBytes: bytes.default(64 * 1024).meta({ description: 'largest JSON body of the management API; larger gets `413`' }),
        formRequestBytes: bytes.default(4 * 1024).meta({ description: 'largest sign-in or consent form; larger gets a `413` page' }),
        authorizeQueryBytes: bytes.default(4 * 1024).meta({
          description: 'largest authorization request (its query, or the form body of a POST); larger gets a `400 invalid_request` '
            + 'page and nothing is stored',
        }),
        bodyTimeoutMs: z.number().int().min(100).max(300_000).default(10_000).meta({
          description: 'a request body that has not arrived in this time is cut: `408`, connection closed',
        }),
      })
      .strict()
      .prefault({}),
    rateLimits: z
      .object({
        failedClientAuth: z
          .union([
            z.literal(false),
            z
              .object({
                perClient: windowLimit.default({ max: 10, windowSeconds: 60 }),
                perAddress: windowLimit.default({ max: 100, windowSeconds: 60 }),
              })
              .strict(),
          ])
          .prefault({})
          .meta({
            description: 'failed client authentications (Basic or a client assertion, at token, PAR, introspection and revocation) '
              + 'allowed per client ID and per source address in a window, counted in '
              + 'the store (shared by all instances); `false` turns it off. See [abuse limits](operations.md#abuse-limits)',
          }),
        authorize: z.union([z.literal(false), windowLimit]).default({ max: 120, windowSeconds: 60 }).meta({
          description: 'authorization requests per source address (each stores a pending sign-in); past it a `429` page with '
            + '`Retry-After`; `false` turns it off',
        }),
        failedSignIn: z
          .union([
            z.literal(false),
            z
              .object({
                perUsername: windowLimit.default({ max: 10, windowSeconds: 900 }),
                perAddress: windowLimit.default({ max: 100, windowSeconds: 900 }),
              })
              .strict(),
          ])
          .prefault({})
          .meta({
            description: 'failed sign-ins per username (case-folded) and per address; past them a `429` page with `Retry-After`, '
              + 'except for a browser that signed in as that user before; `false` turns it off. See '
              + '[sign-in throttling](operations.md#sign-in-throttling)',
          }),
        passkeySignIn: z.union([z.literal(false), windowLimit]).default({ max: 60, windowSeconds: 60 }).meta({
          description: 'passkey ceremonies the sign-in pages start per source address (each keeps a challenge in the store for '
            + '5 minutes); past it the pages offer no passkey until the window ends (the password still works); `false` turns '
            + 'it off. See [passkeys at sign-in](endpoints.md#passkeys-at-sign-in)',
        }),
      })
      .strict()
      .prefault({}),
    observability: z
      .object({ health: z.boolean().default(true), metrics: z.boolean().default(false), tracing: z.boolean().optional() })
      .strict()
      .prefault({})
      .meta({
        description: '`health`: `{pathPrefix}/healthz` and `/readyz`; `metrics`: Prometheus `{pathPrefix}/metrics`; `tracing`: '
          + 'OpenTelemetry spans, on when `@opentelemetry/api` is installed and an SDK is registered at start, `true` turns '
          + 'them on without an SDK at start, `false` off. See '
          + '[observability](operations.md#observability), [tracing](operations.md#tracing)',
      }),
    backchannelLogout: z
      .object({ privateHosts: privateHostsSchema })
      .strict()
      .prefault({}),
    federation: federationOptionSchema,
    proxy: z.boolean().default(false).meta({
      description: 'trust `X-Forwarded-*` (behind a TLS-terminating proxy); also decides the source address the rate limits count',
    }),
    trustedProxyHops: z.number().int().min(1).max(10).default(1).meta({
      description: 'with `proxy`: how many proxies append to `X-Forwarded-For`; the client\'s address is the entry the outermost '
        + 'of them added (entries left of it are the client\'s own words)',
    }),
    tenantPolicy: functionOf<TenantPolicyFunction>('a function of the tenant').optional().meta({
      description: '`(tenant) => TenantPolicy | undefined` (may be async), see [per-tenant policies](#per-tenant-policies)',
    }),
    tenantDisplayName: functionOf<TenantDisplayName>('a function of the tenant').optional().meta({
      description: '`(tenant) => string | undefined` (may be async): the name the consent page gives as "Registered by ..." '
        + "for a tenant's app",
      absent: 'the tenant ID',
    }),
    audit: auditOptionSchema,
    onAuditEvent: onAuditEventOptionSchema,
    portal: portalOptionSchema,
    i18n: i18nOptionSchema,
    branding: brandingOptionSchema,
    logger: z
      .custom<Logger>(
        (value) =>
          typeof value === 'object' && value !== null
          && ['info', 'warn', 'error'].every((level) => typeof (value as Record<string, unknown>)[level] === 'function'),
        { message: 'must have info, warn and error functions' },
      )
      .optional()
      .meta({
        description: '`{ info, warn, error }(message, fields)`; `createLogger({ level, destination })` or `fromPino(hostPinoLogger)` '
          + 'make one; never receives secrets or tokens. See [logs](operations.md#logs)',
        absent: 'pino JSON lines on stderr, with redaction',
      }),
  })
  .strict();

/**
 * What `createAuthServer()` accepts: derived from the option schema (src/options.ts), whose
 * reference, with each option's default and bounds, is docs/configuration.md ("Options").
 */
export type AuthServerOptions = z.input<typeof optionsSchema>;

/**
 * An API of the catalog as the `apis` option takes it: each scope's words in English, or per
 * language (`{ en: 'Read users', de: 'Benutzer lesen' }`, English required).
 */
export type ApiDefinitionInput = z.input<typeof apiSchema>;

/** The options once validated: defaults applied, the catalog's APIs as it keeps them, the audience and issuer. */
export type ResolvedOptions = Omit<z.output<typeof optionsSchema>, 'apis' | 'audience'> & {
  apis: ApiDefinition[];
  audience: string;
  issuer: string;
};

/** An API as the catalog keeps it: English words per scope, and the other languages' aside. */
export function catalogApi(api: z.output<typeof apiSchema>): ApiDefinition {
  const scopes: Record<string, string> = {};
  const scopeTranslations: Record<string, Record<string, string>> = {};
  for (const [scope, words] of Object.entries(api.scopes)) {
    if (typeof words === 'string') {
      scopes[scope] = words;
    } else {
      scopes[scope] = words.en;
      scopeTranslations[scope] = words;
    }
  }
  return { ...api, scopes, ...(Object.keys(scopeTranslations).length ? { scopeTranslations } : {}) };
}

/** Validates the options once; a wrong option throws an error that names the field. */
export function resolveOptions(input: AuthServerOptions): ResolvedOptions {
  const result = optionsSchema.safeParse(input);
  if (!result.success) {
    const details = result.error.issues
      .map((issue) => `${issue.path.length ? issue.path.join('.') : '(options)'}: ${issue.message}`)
      .join('; ');
    throw new TypeError(`createAuthServer: invalid options: ${details}`);
  }
  const options = result.data;
  return {
    ...options,
    apis: options.apis.map(catalogApi),
    audience: options.audience ?? `${options.baseUrl}/api`,
    issuer: `${options.baseUrl}${options.pathPrefix}/oauth2`,
  };
}
