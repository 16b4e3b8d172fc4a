import { z } from 'zod';
import type { AccountStore } from './accounts.js';
import type { ApiDefinition } from '../policies/catalog.js';
import { en, type Messages } from './i18n/messages/en.js';
import type { I18nOptions } from './i18n/localizer.js';
import { PORTAL_TEXT, type PortalTextOverrides } from './portal/text.js';
import { BUILT_IN_MESSAGES } from './i18n/localizer.js';
import { brandingProblems, type Branding, type BrandingOption } from './pages/branding.js';
import type { Logger } from './logger.js';
import type { PrivateJwks, SigningAlgorithm } from './engine/keys.js';
import type { TenantPolicyFunction } from '../policies/tenant-policy.js';
import { DEFAULT_AUDIT_SETTINGS, type AuditHook } from './audit/trail.js';
import type { RedisConnectionOptions } from '../adapters/redis/index.js';
import { databaseIndexProblem } from '../adapters/redis/url.js';
import { MANAGEMENT_SCOPE } from '../policies/management.js';
import { privateHostProblem } from '../policies/backchannel-logout.js';
import { OIDC_SCOPES } from '../policies/scopes.js';
import {
  GRANT_IDLE,
  MANAGEMENT_ACCESS_TOKEN,
  SESSION,
  NAMED_USER_ACCESS_TOKEN,
  REFRESH_TOKEN_REUSE_WINDOW,
  type LifetimeBounds,
} from '../policies/lifetimes.js';

const urlWithoutTrailingSlash = z
  .string()
  .max(200, 'must be at most 200 characters (it is in every token, twice)')
  .url('must be an absolute URL')
  .refine((value) => /^https?:\/\//.test(value), 'must be an http(s) URL')
  .refine((value) => !/[?#]/.test(value), 'must not have a query or fragment')
  .transform((value) => value.replace(/\/+$/, ''));

const identifier = z
  .string()
  .max(32, 'must be at most 32 characters')
  .regex(/^[a-z][a-z0-9_.-]*$/i, 'must start with a letter and hold letters, digits, _ . -');

/** The longest scope name of the catalog. */
const MAX_SCOPE_NAME_LENGTH = 64;
/** The scope claim of the largest token: every scope of the catalog, and ours (docs: "Limits"). */
const MAX_SCOPE_CLAIM_BYTES = 2048;

/** A BCP 47 language tag in its common shape (`de`, `pt-BR`). */
const languageTag = z.string().regex(/^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/, 'must be a language tag like de or pt-BR');

/** What a scope allows: English words, or words per language (English required). */
const scopeWordsSchema = z.union([
  z.string(),
  z
    .record(languageTag, z.string().min(1))
    .refine((words) => typeof words.en === 'string', 'needs English words (en) besides the other languages'),
]);

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

const redisUrl = z
  .string()
  .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
  .superRefine((url, ctx) => {
    const problem = databaseIndexProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const redisStoreSchema = z
  .object({
    type: z.literal('redis'),
    url: redisUrl.optional(),
    cluster: z.object({ nodes: z.array(redisUrl).min(1, 'at least one node') }).strict().optional(),
    sentinel: z
      .object({
        sentinels: z
          .array(z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) }).strict())
          .min(1, 'at least one sentinel'),
        name: z.string().min(1),
        username: z.string().optional(),
        password: z.string().optional(),
      })
      .strict()
      .optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    tls: z
      .union([
        z.boolean(),
        z
          .object({
            ca: z.string().optional(),
            cert: z.string().optional(),
            key: z.string().optional(),
            servername: z.string().optional(),
            rejectUnauthorized: z.boolean().optional(),
          })
          .strict(),
      ])
      .optional(),
    keyPrefix: z.string().optional(),
    commandTimeoutMs: z.number().int().min(50).max(10_000).optional(),
  })
  .strict()
  .refine(
    (store) => [store.url, store.cluster, store.sentinel].filter((given) => given !== undefined).length === 1,
    'give exactly one of url, cluster or sentinel',
  );

const storeSchema = z.discriminatedUnion('type', [z.object({ type: z.literal('memory') }).strict(), redisStoreSchema]);

/** A configurable lifetime in seconds, within its bounds (policies/lifetimes.ts). */
const seconds = (bounds: LifetimeBounds) => z.number().int().min(bounds.min).max(bounds.max).default(bounds.default);

const bytes = z.number().int().min(1024).max(1024 * 1024);

const windowLimit = z
  .object({ max: z.number().int().min(1).max(100_000), windowSeconds: z.number().int().min(1).max(86_400) })
  .strict();

const algorithms = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const satisfies readonly SigningAlgorithm[];

const functionOf = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', { message: `must be ${what}` });

/** A host's texts for one language: only names of ours, each a text or a function like ours. */
const hostMessages = z.record(z.string(), z.unknown()).superRefine((given, ctx) => {
  for (const [key, value] of Object.entries(given)) {
    if (!Object.hasOwn(en, key)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'is not a text of the pages (see Messages)' });
      continue;
    }
    const kind = typeof en[key as keyof Messages];
    if (value !== undefined && typeof value !== kind) ctx.addIssue({ code: 'custom', path: [key], message: `must be a ${kind === 'function' ? 'function' : 'string'}` });
  }
});

/**
 * A host's portal texts for one language: names of ours only, each of the kind ours is (a text, a
 * function, or a group of them, checked one level down).
 */
const portalMessages = z.record(z.string(), z.unknown()).superRefine((given, ctx) => {
  const check = (ours: Record<string, unknown>, theirs: Record<string, unknown>, path: string[]) => {
    for (const [key, value] of Object.entries(theirs)) {
      if (value === undefined) continue;
      if (!Object.hasOwn(ours, key)) {
        ctx.addIssue({ code: 'custom', path: [...path, key], message: 'is not a text of the portal (see PortalText)' });
        continue;
      }
      const mine = ours[key];
      const kind = typeof mine === 'object' && mine !== null ? 'group' : typeof mine;
      const theirKind = typeof value === 'object' && value !== null && !Array.isArray(value) ? 'group' : typeof value;
      if (kind !== theirKind) ctx.addIssue({ code: 'custom', path: [...path, key], message: `must be a ${kind === 'group' ? 'group of texts' : kind === 'function' ? 'function' : 'string'}` });
      else if (kind === 'group' && path.length === 0) check(mine as Record<string, unknown>, value as Record<string, unknown>, [key]);
    }
  };
  check(PORTAL_TEXT as unknown as Record<string, unknown>, given, []);
});

const i18nSchema = z
  .object({
    messages: z.record(languageTag, hostMessages).optional(),
    defaultLocale: languageTag.optional(),
  })
  .strict()
  .superRefine((i18n, ctx) => {
    if (i18n.defaultLocale === undefined) return;
    const tags = [...Object.keys(BUILT_IN_MESSAGES), ...Object.keys(i18n.messages ?? {})].map((tag) => tag.toLowerCase());
    if (!tags.includes(i18n.defaultLocale.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: ['defaultLocale'], message: `"${i18n.defaultLocale}" has no texts: use en, de, fr or a language of i18n.messages` });
    }
  });

/** A static branding is checked here; a function's answers when a page is rendered (pages/branding.ts). */
const brandingSchema = z.union([
  functionOf<Exclude<BrandingOption, Branding>>('a function of the tenant'),
  z
    .object({ productName: z.string().optional(), logoUrl: z.string().optional(), accentColor: z.string().optional() })
    .strict()
    .superRefine((branding, ctx) => {
      for (const { field, message } of brandingProblems(branding)) ctx.addIssue({ code: 'custom', path: [field], message });
    }),
]);

export const optionsSchema = z
  .object({
    baseUrl: urlWithoutTrailingSlash,
    pathPrefix: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*$/, "must be '' or start with '/' and not end with '/'")
      .default(''),
    store: storeSchema.default({ type: 'memory' }),
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
      }),
    accounts: z
      .object({
        authenticate: functionOf<AccountStore['authenticate']>('a function'),
        findAccount: functionOf<AccountStore['findAccount']>('a function'),
        findByUsername: functionOf<NonNullable<AccountStore['findByUsername']>>('a function').optional(),
      })
      .optional(),
    keys: z
      .object({ jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) }) })
      .optional(),
    audience: z.string().url().optional(),
    accessTokenAlgorithm: z.enum(algorithms).default('ES256'),
    namedUserAccessTokenTtl: seconds(NAMED_USER_ACCESS_TOKEN),
    managementAccessTokenTtl: seconds(MANAGEMENT_ACCESS_TOKEN),
    refreshTokenReuseWindowSeconds: seconds(REFRESH_TOKEN_REUSE_WINDOW),
    grantIdleSeconds: seconds(GRANT_IDLE),
    sessionTtl: seconds(SESSION),
    cookieKeys: z.array(z.string().min(32, 'cookie keys need at least 32 characters')).min(1).optional(),
    limits: z
      .object({
        tokenRequestBytes: bytes.default(16 * 1024),
        apiRequestBytes: bytes.default(64 * 1024),
        formRequestBytes: bytes.default(4 * 1024),
        authorizeQueryBytes: bytes.default(4 * 1024),
        bodyTimeoutMs: z.number().int().min(100).max(300_000).default(10_000),
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
          .prefault({}),
        authorize: z.union([z.literal(false), windowLimit]).default({ max: 120, windowSeconds: 60 }),
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
          .prefault({}),
      })
      .strict()
      .prefault({}),
    observability: z
      .object({ health: z.boolean().default(true), metrics: z.boolean().default(false) })
      .strict()
      .prefault({}),
    backchannelLogout: z
      .object({
        privateHosts: z
          .array(z.string().max(253).superRefine((entry, ctx) => {
            const problem = privateHostProblem(entry);
            if (problem) ctx.addIssue({ code: 'custom', message: `${entry}: ${problem}` });
          }))
          .max(100)
          .default([]),
      })
      .strict()
      .prefault({}),
    proxy: z.boolean().default(false),
    trustedProxyHops: z.number().int().min(1).max(10).default(1),
    tenantPolicy: functionOf<TenantPolicyFunction>('a function of the tenant').optional(),
    tenantDisplayName: functionOf<TenantDisplayName>('a function of the tenant').optional(),
    audit: z
      .object({
        retentionDays: z.number().int().min(1).max(3650).default(DEFAULT_AUDIT_SETTINGS.retentionDays),
        maxEventsPerTenant: z.number().int().min(100).max(10_000_000).default(DEFAULT_AUDIT_SETTINGS.maxEventsPerTenant),
      })
      .strict()
      .prefault({}),
    onAuditEvent: functionOf<AuditHook>('a function of the event').optional(),
    portal: z
      .object({
        enabled: z.boolean().default(false),
        path: z.string().regex(/^(\/[a-z0-9-]+)+$/, "must be like '/portal': lower-case letters, digits and '-' in each segment").max(64).default('/portal'),
        internalUrl: urlWithoutTrailingSlash
          .refine((value) => value.startsWith('https:') || ['localhost', '127.0.0.1', '[::1]'].includes(new URL(value).hostname), {
            message: 'must be https, or http to a loopback address (the portal sends its secret and users\' tokens there)',
          })
          .optional(),
        messages: z.record(languageTag, portalMessages).optional(),
      })
      .strict()
      .prefault({}),
    i18n: i18nSchema.optional(),
    branding: brandingSchema.optional(),
    logger: z
      .custom<Logger>(
        (value) =>
          typeof value === 'object' && value !== null
          && ['info', 'warn', 'error'].every((level) => typeof (value as Record<string, unknown>)[level] === 'function'),
        { message: 'must have info, warn and error functions' },
      )
      .optional(),
  })
  .strict();

/** The Redis store: a connection (adapters/redis/) plus key prefix and command timeout. */
export type RedisStoreOption = { type: 'redis'; keyPrefix?: string; commandTimeoutMs?: number } & RedisConnectionOptions;

/** What `createAuthServer()` accepts. */
export interface AuthServerOptions {
  /** Public base address, e.g. `https://auth.example.com`. */
  baseUrl: string;
  /** Path under which everything is served: `''` (default) or e.g. `'/auth2'`. */
  pathPrefix?: string;
  /**
   * Where state lives: memory (one process, development) or Redis: exactly one of `url` (one node),
   * `cluster: { nodes }` (Redis Cluster) or `sentinel: { sentinels, name }` (Sentinel-managed master).
   */
  store?: { type: 'memory' } | RedisStoreOption;
  apis: ApiDefinitionInput[];
  accounts?: AccountStore;
  keys?: { jwks: PrivateJwks };
  /** The `aud` of every access token; default `{baseUrl}/api`. */
  audience?: string;
  /** Access-token signing algorithm; default ES256. */
  accessTokenAlgorithm?: SigningAlgorithm;
  /** Lifetime of named-user access tokens, 300..3600 s; default 300. */
  namedUserAccessTokenTtl?: number;
  /**
   * Lifetime of access tokens that carry the management right (`manage.integrations`), 60..3600 s;
   * default 300, whatever the named-user or tenant lifetime.
   */
  managementAccessTokenTtl?: number;
  /**
   * A refresh token presented again within this many seconds of its rotation, while its successor
   * is unused, gets the same successor instead of ending the grant (a client that lost the answer
   * retries safely); 0..300, default 60. 0: only a rotation that never answered may be retried.
   */
  refreshTokenReuseWindowSeconds?: number;
  /**
   * A grant (a user's consent to an app, with its refresh tokens) nobody used for this long ends;
   * every refresh gives it this long again, and the consent itself stays until revoked (the next
   * sign-in makes a new grant without asking again). 3600 s..366 days; default 90,000 s (the
   * refresh token lifetime plus the sign-in session lifetime).
   */
  grantIdleSeconds?: number;
  /**
   * How long a browser stays signed in here (the sign-in session) unless the user signs out,
   * 300 s..30 days; default 86,400 (a day). Apps ask for the password sooner with `prompt=login`
   * or `max_age`. Signing out ends the session on every instance at once.
   */
  sessionTtl?: number;
  /** Keys that sign the sign-in cookies (newest first); generated per process when absent. */
  cookieKeys?: string[];
  /** Request body limits in bytes (1 KiB..1 MiB); larger bodies get 413. */
  limits?: {
    /** POST /oauth2/token; default 16 KiB. */
    tokenRequestBytes?: number;
    /** JSON bodies of the management API; default 64 KiB. */
    apiRequestBytes?: number;
    /** The sign-in and consent forms; default 4 KiB. */
    formRequestBytes?: number;
    /** The query (or form body) of an authorization request; default 4 KiB (larger: 400 page). */
    authorizeQueryBytes?: number;
    /** A request body that has not arrived in this many milliseconds is cut with 408; default 10 s. */
    bodyTimeoutMs?: number;
  };
  /**
   * Failed client authentications at the token endpoint, counted in the store (shared by every
   * instance) per client ID and per source address; over `max` in the window: 429 + Retry-After.
   * Defaults 10 per client ID and 100 per address per 60 s; `false` turns it off.
   */
  rateLimits?: {
    failedClientAuth?:
      | false
      | { perClient?: { max: number; windowSeconds: number }; perAddress?: { max: number; windowSeconds: number } };
    /**
     * Authorization requests per source address, counted in the store; default 120 per 60 s; past
     * it: a 429 page with Retry-After. `false` turns it off.
     */
    authorize?: false | { max: number; windowSeconds: number };
    /**
     * Failed sign-ins (a wrong password), counted per username and per address in the store;
     * defaults 10 per username and 100 per address per 15 minutes; past them: a 429 page with
     * Retry-After. A browser that signed in as that user before is not held by the username limit.
     * `false` turns it off.
     */
    failedSignIn?:
      | false
      | { perUsername?: { max: number; windowSeconds: number }; perAddress?: { max: number; windowSeconds: number } };
  };
  /**
   * Back-channel logout delivery. Logout tokens never go to a special-use address (loopback,
   * private, link-local, CGNAT, unique-local, ...): every address a host resolves to is checked
   * before we connect. `privateHosts` lists the operator's own local or private destinations that
   * may be reached anyway, for the operator's apps only (never a tenant's): exact host names
   * (`billing.default.svc.cluster.local`, `localhost`), IP addresses and CIDR ranges
   * (`10.0.0.0/8`, `fd00::/8`); default none. Public hosts need no entry.
   */
  backchannelLogout?: { privateHosts?: string[] };
  /** `{pathPrefix}/healthz` and `/readyz` (default on), Prometheus `{pathPrefix}/metrics` (default off). */
  observability?: { health?: boolean; metrics?: boolean };
  /** Trust X-Forwarded-* headers (behind a TLS-terminating proxy). */
  proxy?: boolean;
  /**
   * With `proxy`: how many proxies in front append to X-Forwarded-For; the client's address is the
   * entry the outermost of them added (default 1). Entries left of it are the client's own words.
   */
  trustedProxyHops?: number;
  /** Per-tenant narrowing: which apps its users may authorize, which scopes, token lifetime. */
  tenantPolicy?: TenantPolicyFunction;
  /**
   * A tenant's name as people know it, for the consent page's "Registered by ..." (may be async;
   * undefined or absent: the tenant ID is shown).
   */
  tenantDisplayName?: TenantDisplayName;
  /**
   * The audit trail's retention: events older than `retentionDays` (1..3650, default 400) go, and
   * beyond `maxEventsPerTenant` (100..10,000,000, default 1,000,000) the oldest of a tenant go.
   */
  audit?: { retentionDays?: number; maxEventsPerTenant?: number };
  /**
   * Called with every audit event written (for a SIEM, a webhook); may be async. What it throws
   * or rejects with is logged and ignored: it never breaks the action.
   */
  onAuditEvent?: AuditHook;
  /**
   * The administration portal (off by default): served at `{pathPrefix}{path}` (`path` default
   * `/portal`). It signs users in through our own authorization endpoint as a first-party app of
   * its own and calls the management and consent APIs with their tokens, at `internalUrl` when
   * given (e.g. `http://127.0.0.1:3000`, when the public base URL is not reachable from the server
   * itself), else at `baseUrl`.
   */
  portal?: {
    enabled?: boolean;
    path?: string;
    internalUrl?: string;
    /**
     * The portal's texts a host adds or overrides, per language tag: a tag of ours (`en`, `de`,
     * `fr`) has only the texts given replaced; a new tag is a new language, its missing texts in
     * English. Groups (`clients`, `apps`, ...) are merged one level down.
     */
    messages?: Record<string, PortalTextOverrides>;
  };
  /**
   * The pages' languages: English, German and French are built in; `messages` adds a language
   * (missing texts in English) or overrides texts of one; `defaultLocale` is served when neither
   * the request's `ui_locales` nor the browser's `Accept-Language` names one we have (default `en`).
   */
  i18n?: I18nOptions;
  /**
   * The look of the sign-in, consent and sign-out pages of an app: one branding, or a function of
   * the app's tenant (`undefined` for the platform's own apps). The accent colour must keep a
   * contrast of 4.5:1 with white (a static one is refused here; a function's bad answer falls back
   * to the default, with a warning); the logo is https (http only on localhost) or a path here.
   */
  branding?: BrandingOption;
  logger?: Logger;
}

/**
 * An API of the catalog as the `apis` option takes it: each scope's words in English, or per
 * language (`{ en: 'Read users', de: 'Benutzer lesen' }`, English required).
 */
export type ApiDefinitionInput = Omit<ApiDefinition, 'constraints' | 'scopes' | 'scopeTranslations'> & {
  scopes: Record<string, string | ({ en: string } & Record<string, string>)>;
  constraints?: string[];
};

/** A tenant's display name (`tenantDisplayName` option). */
export type TenantDisplayName = (tenant: string) => string | undefined | Promise<string | undefined>;

export type ResolvedOptions = Omit<z.output<typeof optionsSchema>, 'keys' | 'apis' | 'accounts' | 'tenantPolicy' | 'tenantDisplayName' | 'store' | 'onAuditEvent' | 'i18n' | 'branding'> & {
  i18n?: I18nOptions;
  branding?: BrandingOption;
  onAuditEvent?: AuditHook;
  store: { type: 'memory' } | RedisStoreOption;
  apis: ApiDefinition[];
  tenantPolicy?: TenantPolicyFunction;
  tenantDisplayName?: TenantDisplayName;
  keys?: { jwks: PrivateJwks };
  accounts?: AccountStore;
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
      scopes[scope] = words.en!;
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
    keys: options.keys as { jwks: PrivateJwks } | undefined,
    store: options.store as ResolvedOptions['store'],
    accounts: options.accounts,
    tenantPolicy: options.tenantPolicy,
    tenantDisplayName: options.tenantDisplayName,
    onAuditEvent: options.onAuditEvent,
    i18n: options.i18n as I18nOptions | undefined,
    branding: options.branding as BrandingOption | undefined,
    audience: options.audience ?? `${options.baseUrl}/api`,
    issuer: `${options.baseUrl}${options.pathPrefix}/oauth2`,
  };
}
