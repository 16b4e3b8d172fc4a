import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';

const resources = { scim: { scopes: ['scim.read'] } };

/** The value of one Prometheus sample line, e.g. `name{a="b"} 3`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health and readiness', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ pathPrefix: '/auth2' });
  });
  afterAll(() => server.stop());

  it('GET {pathPrefix}/healthz answers 200 while the process runs', async () => {
    const response = await fetch(`${server.baseUrl}/auth2/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('GET {pathPrefix}/readyz answers 200 when the store answers', async () => {
    const response = await fetch(`${server.baseUrl}/auth2/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', store: 'up' });
  });

  it('refuses other methods with 405 and Allow', async () => {
    const response = await fetch(`${server.baseUrl}/auth2/readyz`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves no metrics unless asked to', async () => {
    expect((await fetch(`${server.baseUrl}/auth2/metrics`)).status).toBe(404);
    expect(server.auth.metrics).toBeUndefined();
  });

  it('can be turned off', async () => {
    const quiet = await startServer({ observability: { health: false } });
    try {
      expect((await fetch(`${quiet.baseUrl}/healthz`)).status).toBe(404);
      expect((await fetch(`${quiet.baseUrl}/readyz`)).status).toBe(404);
    } finally {
      await quiet.stop();
    }
  });
});

describe('Prometheus metrics', () => {
  let server: RunningServer;
  let clientId: string;
  let clientSecret: string;
  const scrape = async () => {
    const response = await fetch(`${server.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  beforeAll(async () => {
    server = await startServer({ observability: { metrics: true } });
    ({ clientId, clientSecret } = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'n', category: 'c', resources,
    }));
  });
  afterAll(() => server.stop());

  it('counts tokens by grant type, errors by OAuth code, and times requests by route group', async () => {
    const before = await scrape();
    const issued = 'talent_auth_tokens_issued_total{grant_type="client_credentials"}';
    const invalidClient = 'talent_auth_oauth_errors_total{error="invalid_client",route="token"}';
    const invalidScope = 'talent_auth_oauth_errors_total{error="invalid_scope",route="token"}';
    const tokenTimings = 'talent_auth_http_request_duration_seconds_count{route="token",method="POST",status="200"}';

    for (let i = 0; i < 3; i += 1) {
      expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, clientSecret) })).status).toBe(200);
    }
    await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, 'wrong') });
    await postToken(server.oauthUrl, 'grant_type=client_credentials&scope=nope', { authorization: basic(clientId, clientSecret) });

    const after = await scrape();
    expect((sample(after, issued) ?? 0) - (sample(before, issued) ?? 0)).toBe(3);
    expect((sample(after, invalidClient) ?? 0) - (sample(before, invalidClient) ?? 0)).toBe(1);
    expect((sample(after, invalidScope) ?? 0) - (sample(before, invalidScope) ?? 0)).toBe(1);
    expect((sample(after, tokenTimings) ?? 0) - (sample(before, tokenTimings) ?? 0)).toBe(3);
    expect(after).toContain('talent_auth_http_request_duration_seconds_bucket{le="0.05",route="token",method="POST",status="200"}');
    expect(after).toContain('# TYPE talent_auth_store_errors_total counter');
    expect(after).toContain('# TYPE talent_auth_rate_limited_total counter');
    expect(after).toContain('talent_auth_process_cpu_seconds_total');
  });

  it('labels requests by route group, never by raw path', async () => {
    await fetch(`${server.oauthUrl}/jwks`);
    await fetch(`${server.baseUrl}/api/oauth2/consents/some-client-id`);
    const text = await scrape();
    expect(text).toContain('route="jwks"');
    expect(text).toContain('route="consent_api"');
    expect(text).not.toContain('some-client-id');
  });

  it('exposes the registry to the host, and two servers in one process keep their own', async () => {
    const other = await startServer({ observability: { metrics: true } });
    try {
      expect(other.auth.metrics).toBeDefined();
      expect(other.auth.metrics).not.toBe(server.auth.metrics);
      const text = await other.auth.metrics!.metrics();
      expect(sample(text, 'talent_auth_tokens_issued_total{grant_type="client_credentials"}')).toBeUndefined();
    } finally {
      await other.stop();
    }
  });

  it('never puts a secret or token in a metric', async () => {
    const ok = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, clientSecret) });
    const text = await scrape();
    expect(text).not.toContain(clientSecret);
    expect(text).not.toContain(String(ok.body.access_token));
    expect(text).not.toContain(clientId);
  });
});
