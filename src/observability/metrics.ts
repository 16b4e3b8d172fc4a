import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Route groups: a bounded label set (paths hold IDs, which would make unbounded series). */
export type RouteGroup =
  | 'token' | 'authorize' | 'interaction' | 'jwks' | 'discovery' | 'consent_api' | 'management_api'
  | 'userinfo' | 'introspection' | 'revocation' | 'sign_out' | 'health' | 'metrics' | 'other';

/** The server's Prometheus metrics, in a registry of its own (several servers in one process stay apart). */
export class Metrics {
  readonly registry = new Registry();

  readonly tokensIssued = new Counter({
    name: 'talent_auth_tokens_issued_total',
    help: 'Token responses with an access token, by grant type',
    labelNames: ['grant_type'] as const,
    registers: [this.registry],
  });

  readonly oauthErrors = new Counter({
    name: 'talent_auth_oauth_errors_total',
    help: 'OAuth error responses, by error code and route group',
    labelNames: ['error', 'route'] as const,
    registers: [this.registry],
  });

  readonly requestDuration = new Histogram({
    name: 'talent_auth_http_request_duration_seconds',
    help: 'Time to answer a request, by route group, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly storeErrors = new Counter({
    name: 'talent_auth_store_errors_total',
    help: 'Store (Redis) connection errors, by error code',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly storeEmptied = new Counter({
    name: 'talent_auth_store_emptied_total',
    help: 'Times the store was found emptied while in use (Redis restarted without persistence, flushed): everything stored before is gone',
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'talent_auth_rate_limited_total',
    help: 'Requests refused with 429 by a rate limit: client_auth (token endpoint), authorize, sign_out, sign_in',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly signInFailures = new Counter({
    name: 'talent_auth_sign_in_failures_total',
    help: 'Failed sign-ins (wrong username or password)',
    registers: [this.registry],
  });

  readonly upstreamSignOuts = new Counter({
    name: 'talent_auth_upstream_sign_outs_total',
    help: "Our sign-outs of users who last signed in through a provider, by outcome: redirected (on to the provider's end-session endpoint), no_endpoint (its discovery names none or could not be read), not_asked (the connection does not ask for it, or is gone)",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly backchannelLogouts = new Counter({
    name: 'talent_auth_backchannel_logouts_total',
    help: 'Back-channel logout tokens posted to apps, by outcome: delivered, refused (a special-use address: never connected), timeout, unreachable, rejected (the app answered another status than 200 or 204), error',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly federatedSignIns = new Counter({
    name: 'talent_auth_federated_sign_ins_total',
    help: 'Sign-ins through a tenant\'s identity provider, by outcome: succeeded, or why one failed (unreachable, timeout, refused, bad_metadata, error_response, invalid_response, provider_error, state_mismatch, binding_mismatch, expired, connection_gone, wrong_tenant, domain_not_owned, no_email, no_account)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'talent_auth_' });
  }
}
