import { z } from 'zod';
import type { AccountStore } from './accounts.js';
import type { ApiDefinition } from './catalog.js';
import type { Logger } from './logger.js';
import type { PrivateJwks, SigningAlgorithm } from './provider/keys.js';
import type { TenantPolicyFunction } from '../policies/tenant-policy.js';

const urlWithoutTrailingSlash = z
  .string()
  .url('must be an absolute URL')
  .refine((value) => /^https?:\/\//.test(value), 'must be an http(s) URL')
  .refine((value) => !/[?#]/.test(value), 'must not have a query or fragment')
  .transform((value) => value.replace(/\/+$/, ''));

const identifier = z.string().regex(/^[a-z][a-z0-9_.-]*$/i, 'must start with a letter and hold letters, digits, _ . -');

const apiSchema = z
  .object({
    id: identifier,
    name: z.string().min(1),
    scopes: z
      .record(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'scope names are RFC 6749 scope tokens'), z.string())
      .refine((scopes) => Object.keys(scopes).length > 0, 'an API needs at least one scope'),
    constraints: z.array(identifier).default([]),
  })
  .strict();

const storeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('memory') }).strict(),
  z
    .object({
      type: z.literal('redis'),
      url: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
      keyPrefix: z.string().optional(),
    })
    .strict(),
]);

const algorithms = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const satisfies readonly SigningAlgorithm[];

const functionOf = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', { message: `must be ${what}` });

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
            const owner = scopes.get(scope);
            if (owner) ctx.addIssue({ code: 'custom', message: `scope "${scope}" is defined by both "${owner}" and "${api.id}"` });
            scopes.set(scope, api.id);
          }
        }
      }),
    accounts: z
      .object({
        authenticate: functionOf<AccountStore['authenticate']>('a function'),
        findAccount: functionOf<AccountStore['findAccount']>('a function'),
      })
      .optional(),
    keys: z
      .object({ jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) }) })
      .optional(),
    audience: z.string().url().optional(),
    accessTokenAlgorithm: z.enum(algorithms).default('ES256'),
    namedUserAccessTokenTtl: z.number().int().min(300).max(3600).default(300),
    cookieKeys: z.array(z.string().min(32, 'cookie keys need at least 32 characters')).min(1).optional(),
    limits: z
      .object({ tokenRequestBytes: z.number().int().min(1024).max(1024 * 1024).default(16 * 1024) })
      .prefault({}),
    proxy: z.boolean().default(false),
    tenantPolicy: functionOf<TenantPolicyFunction>('a function of the tenant').optional(),
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

/** What `createAuthServer()` accepts. */
export interface AuthServerOptions {
  /** Public base address, e.g. `https://auth.example.com`. */
  baseUrl: string;
  /** Path under which everything is served: `''` (default) or e.g. `'/auth2'`. */
  pathPrefix?: string;
  store?: { type: 'memory' } | { type: 'redis'; url: string; keyPrefix?: string };
  apis: Array<Omit<ApiDefinition, 'constraints'> & { constraints?: string[] }>;
  accounts?: AccountStore;
  keys?: { jwks: PrivateJwks };
  /** The `aud` of every access token; default `{baseUrl}/api`. */
  audience?: string;
  /** Access-token signing algorithm; default ES256. */
  accessTokenAlgorithm?: SigningAlgorithm;
  /** Lifetime of named-user access tokens, 300..3600 s; default 300. */
  namedUserAccessTokenTtl?: number;
  /** Keys that sign the sign-in cookies (newest first); generated per process when absent. */
  cookieKeys?: string[];
  limits?: { tokenRequestBytes?: number };
  /** Trust X-Forwarded-* headers (behind a TLS-terminating proxy). */
  proxy?: boolean;
  /** Per-tenant narrowing: which apps its users may authorize, which scopes, token lifetime. */
  tenantPolicy?: TenantPolicyFunction;
  logger?: Logger;
}

export type ResolvedOptions = Omit<z.output<typeof optionsSchema>, 'keys' | 'apis' | 'accounts' | 'tenantPolicy'> & {
  apis: ApiDefinition[];
  tenantPolicy?: TenantPolicyFunction;
  keys?: { jwks: PrivateJwks };
  accounts?: AccountStore;
  audience: string;
  issuer: string;
};

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
    apis: options.apis,
    keys: options.keys as { jwks: PrivateJwks } | undefined,
    accounts: options.accounts,
    tenantPolicy: options.tenantPolicy,
    audience: options.audience ?? `${options.baseUrl}/api`,
    issuer: `${options.baseUrl}${options.pathPrefix}/oauth2`,
  };
}
