import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { Connections } from '../../src/federation/connections.js';
import { Sealer } from '../../src/records/sealed.js';
import { APP_REDIRECT, authorize, federate, startFederationRig, type FederationRig } from '../support/federation.js';
import { useStore } from '../support/stores.js';

/*
 * VERIFIED AND UNVERIFIED DOMAINS at home-realm discovery (src/federation/connections.ts,
 * src/endpoints/sign-in/federation-steps.ts): a domain the operator named sends users of every
 * app that may use the connection to its provider; a domain a tenant's admin named (unverified)
 * only the users of that tenant's own apps. So a tenant that names another organisation's domain
 * receives none of that organisation's users at the platform's apps.
 */

const TENANT_ADMIN = { actor: { type: 'user' as const, id: 'acme-admin' } };

describe('home-realm discovery by verified and unverified domains (redis store)', () => {
  const handle = useStore('redis');
  let rig: FederationRig;
  let platform: FederationRig['app'];
  let store: Store;

  beforeAll(async () => {
    const option = handle.option();
    rig = await startFederationRig({ appTenant: null, server: { store: option } });
    platform = rig.app;
    // The tenant's admin adds a domain (the management API's author: 'tenant'), on the same store.
    store = await createRedisStore({ url: handle.redis!.url, keyPrefix: option.type === 'redis' ? option.keyPrefix : '' });
    const asTenant = new Connections(store.records, new Sealer(['unused-key-for-this-test-0123456789abcdef'], 'connection-secrets'));
    const changed = await asTenant.update(rig.connection.id, { domains: ['acme.example', 'acme-claimed.example'] }, TENANT_ADMIN, 'tenant');
    expect(changed.verifiedDomains).toEqual(['acme.example']);
  });
  afterAll(async () => {
    await store?.close();
    await rig.stop();
  });

  it("a platform app: the operator's verified domain leads to the provider, the tenant's unverified one does not (the password page)", async () => {
    const verified = await authorize(rig, {}, platform.config);
    const toProvider = await federate(verified.agent, verified.step, { email: "ada@acme.example" });
    // The platform app's page names no provider in its CSP: the page that leads on, to the provider.
    const onward = toProvider.location ?? /<a href="(http[^"]+)">/.exec(toProvider.html)?.[1]?.replace(/&amp;/g, '&');
    expect(new URL(onward ?? 'http://none').origin).toBe(rig.upstream.issuer);

    const unverified = await authorize(rig, {}, platform.config);
    const page = await federate(unverified.agent, unverified.step, { email: 'ada@acme-claimed.example' });
    expect(page.status).toBe(200);
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('name="password"');
    expect(page.html).toContain('There is no organisation sign-in for this address');
    // A login_hint at it does not skip the page either.
    const hinted = await authorize(rig, { login_hint: 'ada@acme-claimed.example' }, platform.config);
    expect(hinted.step.status).toBe(200);
    expect(hinted.step.location).toBeUndefined();
  });

  it("an app of the connection's own tenant: its unverified domain leads to its provider", async () => {
    const own = await rig.server.auth.appRegistrations.create({ name: 'Acme app', tenant: 'acme', redirectUris: [APP_REDIRECT], clientType: 'public' });
    const client = await import('openid-client');
    const config = new client.Configuration(platform.config.serverMetadata(), own.clientId);
    client.allowInsecureRequests(config);
    const started = await authorize(rig, {}, config);
    const toProvider = await federate(started.agent, started.step, { email: 'ada@acme-claimed.example' });
    expect(toProvider.status).toBe(303);
    expect(new URL(toProvider.location!).origin).toBe(rig.upstream.issuer);
  });
});
