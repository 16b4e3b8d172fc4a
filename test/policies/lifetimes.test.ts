import {
  accessTokenSeconds,
  GRANT_IDLE,
  grantNeedsExtending,
  MANAGEMENT_ACCESS_TOKEN,
  NAMED_USER_ACCESS_TOKEN,
  namedUserAccessTokenSeconds,
  REFRESH_TOKEN_REUSE_WINDOW,
  REFRESH_TOKEN_SECONDS,
  SESSION,
} from '../../policies/lifetimes.js';
import * as lifetimes from '../../policies/lifetimes.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { resolveOptions } from '../../src/options.js';
import { tenantPolicy } from '../../policies/tenant-policy.js';

const MINUTE = 60;
const DAY = 86_400;
const base = { baseUrl: 'https://auth.example.com', apis: [{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'Read users' } }] };

describe('lifetimes (policies/lifetimes.ts)', () => {
  it.each([
    ['namedUserAccessTokenTtl', NAMED_USER_ACCESS_TOKEN, 300, 300, 3600],
    ['managementAccessTokenTtl', MANAGEMENT_ACCESS_TOKEN, 300, 60, 3600],
    ['refreshTokenReuseWindowSeconds', REFRESH_TOKEN_REUSE_WINDOW, 5, 0, 60],
    ['grantIdleSeconds', GRANT_IDLE, 90_000, 3600, 366 * 86_400],
    ['sessionTtl', SESSION, 86_400, 300, 30 * 86_400],
  ] as const)('option %s: default %j, the options read its bounds', (option, bounds, byDefault, min, max) => {
    expect(bounds).toEqual({ default: byDefault, min, max });
    expect(resolveOptions(base)[option]).toBe(byDefault);
    expect(resolveOptions({ ...base, [option]: min })[option]).toBe(min);
    expect(resolveOptions({ ...base, [option]: max })[option]).toBe(max);
    expect(() => resolveOptions({ ...base, [option]: min - 1 })).toThrow(option);
    expect(() => resolveOptions({ ...base, [option]: max + 1 })).toThrow(option);
  });

  it('a tenant policy has the named-user bounds', async () => {
    await expect(tenantPolicy(() => ({ accessTokenTtl: NAMED_USER_ACCESS_TOKEN.max }), 't')).resolves.toEqual({ accessTokenTtl: 3600 });
    await expect(tenantPolicy(() => ({ accessTokenTtl: NAMED_USER_ACCESS_TOKEN.min - 1 }), 't')).rejects.toThrow('accessTokenTtl');
  });

  it.each([
    [undefined, 300, 300],
    [900, 300, 900],
    [3600, 1200, 3600],
  ])('tenant lifetime %s, server lifetime %i → %i', (tenant, server, expected) => {
    expect(namedUserAccessTokenSeconds(tenant, server)).toBe(expected);
  });

  it.each([
    [['scim.read'], 3600, 300, 3600],
    [['scim.read', MANAGEMENT_SCOPE], 3600, 300, 300],
    [[MANAGEMENT_SCOPE], 200, 300, 200],
    [[], 900, 60, 900],
  ])('scopes %j, lifetime %i, management cap %i → %i', (scopes, ttl, cap, expected) => {
    expect(accessTokenSeconds(scopes, ttl, cap)).toBe(expected);
  });

  it.each([
    // seconds left, idle lifetime → extend?
    [90_000, 90_000, false],
    [86_401, 90_000, false],
    [86_399, 90_000, true],
    [3599, 90_000, true],
    [3601, 3600, false],
    [3599, 3600, true],
    [0, 3600, true],
    // Exactly at the mark: not yet.
    [86_400, 90_000, false],
    [3600, 3600, false],
  ])('a grant with %i s left of %i s idle is extended: %s', (left, idle, expected) => {
    expect(grantNeedsExtending(left, idle)).toBe(expected);
  });

  // The fixed lifetimes, in the units the docs state them in: a changed one is a decision, not a typo.
  it.each([
    ['TOTP_ENROLMENT_SECONDS', lifetimes.TOTP_ENROLMENT_SECONDS, 10 * MINUTE],
    ['TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS', lifetimes.TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS, MINUTE],
    ['PASSKEY_CHALLENGE_SECONDS', lifetimes.PASSKEY_CHALLENGE_SECONDS, 5 * MINUTE],
    ['CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS', lifetimes.CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS, 60 * MINUTE],
    ['AUTHORIZATION_CODE_SECONDS', lifetimes.AUTHORIZATION_CODE_SECONDS, 5 * MINUTE],
    ['HIGH_SECURITY_AUTHORIZATION_CODE_SECONDS', lifetimes.HIGH_SECURITY_AUTHORIZATION_CODE_SECONDS, MINUTE],
    ['PORTAL_SESSION_SECONDS', lifetimes.PORTAL_SESSION_SECONDS, 30 * MINUTE],
    ['PORTAL_SIGN_IN_SECONDS', lifetimes.PORTAL_SIGN_IN_SECONDS, 10 * MINUTE],
    ['PORTAL_SECRET_SECONDS', lifetimes.PORTAL_SECRET_SECONDS, 10 * MINUTE],
    ['PORTAL_REAUTH_SECONDS', lifetimes.PORTAL_REAUTH_SECONDS, 5 * MINUTE],
    ['KNOWN_DEVICE_SECONDS', lifetimes.KNOWN_DEVICE_SECONDS, 180 * DAY],
    ['SIGN_OUT_CARRIED_SECONDS', lifetimes.SIGN_OUT_CARRIED_SECONDS, MINUTE],
    ['UPSTREAM_SIGN_OUT_SECONDS', lifetimes.UPSTREAM_SIGN_OUT_SECONDS, 15 * MINUTE],
    ['FEDERATION_MAX_SECONDS', lifetimes.FEDERATION_MAX_SECONDS, 15 * MINUTE],
    ['CLIENT_CACHE_SECONDS', lifetimes.CLIENT_CACHE_SECONDS, 10 * MINUTE],
    ['REFUSAL_WINDOW_SECONDS', lifetimes.REFUSAL_WINDOW_SECONDS, 5 * MINUTE],
    ['REFRESH_TOKEN_SECONDS', lifetimes.REFRESH_TOKEN_SECONDS, 60 * MINUTE],
    ['ID_TOKEN_SECONDS', lifetimes.ID_TOKEN_SECONDS, 60 * MINUTE],
    ['INTERACTION_SECONDS', lifetimes.INTERACTION_SECONDS, 10 * MINUTE],
    ['SESSION_SECONDS', lifetimes.SESSION_SECONDS, DAY],
    ['MAX_ACCESS_TOKEN_SECONDS', lifetimes.MAX_ACCESS_TOKEN_SECONDS, 60 * MINUTE],
  ])('%s is %i s', (_name, value, expected) => {
    expect(value).toBe(expected);
  });

  it('no grant is shorter-lived than a refresh token', () => {
    expect(GRANT_IDLE.min).toBe(REFRESH_TOKEN_SECONDS);
  });

  // A lifetime stated in a module of its own would escape this table; what stays in the modules is
  // timing (timeouts, retries, margins), listed here with why, so a new one is a decision.
  const TIMINGS: Record<string, string> = {
    RACE_SECONDS: 'single-use: the margin within which two uses count as one race',
    DELIVERY_TIMEOUT_MS: 'back-channel delivery: how long one POST may take',
    EXTERNAL_SIGN_TIMEOUT_MS: 'an external signer (KMS, HSM): how long one signature may take',
    STORE_RETRY_AFTER_SECONDS: 'the Retry-After of a 503 while the store is away',
    RETRY_MS: "a retry of the portal's own records at start-up",
    DAY_MS: 'a unit',
    RENEW_AFTER_MS: 'how often an unchanged portal session is written again',
    MAX_AGE_MS: "how fresh the portal's signed address header must be",
    TOKEN_MARGIN_MS: 'how early the portal refreshes its token',
    TIMEOUT_MS: "the portal's API calls",
    SKEW_SECONDS: "the clock skew allowed between an ID token's auth_time and ours (the portal's re-authentication)",
    TOTP_PERIOD_SECONDS: 'an authenticator app\'s time step (RFC 6238), what apps compute codes with',
    DPOP_PROOF_WINDOW_SECONDS: "how far a DPoP proof's iat may be from our clock (RFC 9449 §11.1: its acceptance window)",
    FED_MARKS_REFRESH_MS: 'how often the marks every instance keeps in memory (revoked chains, held addresses) are read again whole',
    CLOCK_TOLERANCE_SECONDS: "the clock skew allowed for a client assertion's exp and iat (introspection and revocation)",
    SLOTS_REFRESH_MIN_MS: "how often at most a Redis Cluster's slots are asked for again while a node is gone (adapters/redis/connection.ts)",
  };

  it('no lifetime is stated outside policies/lifetimes.ts: the numbers left in modules are timings', () => {
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts')) {
          for (const match of readFileSync(path, 'utf8').matchAll(/const ([A-Z_]*(?:SECONDS|TTL|DAYS|_MS))\s*=\s*[0-9]/g)) found.push(match[1]!);
        }
      }
    };
    walk(join(process.cwd(), 'src'));
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((name) => !(name in TIMINGS))).toEqual([]);
  });
});
