/**
 * Bounded records: what goes into a token is bounded (constraint values, the constraints claim,
 * tenant IDs, the catalogue's scope names, baseUrl), so that the largest access token stays under
 * 8 KB; what does not (names, descriptions, redirect URIs) is bounded too. Over a limit: 400 with
 * the field (ValidationError in the library), nothing stored.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { ValidationError } from '../../src/index.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

const MAX_TOKEN_BYTES = 8 * 1024;

describe('adversarial: bounded records', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.stop());

  const create = (constraints: Record<string, string[]>, tenant = 'acme') =>
    server.auth.clientConfigurations.create({ tenant, name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'], constraints } } });

  it.each([
    ['a constraint value of 101 characters', { group: ['g'.repeat(101)] }, 'resources.scim.constraints.group', /at most 100 characters/],
    ['6,000 values for one dimension', { group: Array.from({ length: 6000 }, (_, i) => `group-${i}`) }, 'resources', /at most 3072 are allowed/],
    ['values that together make a claim over 3 KB', { group: Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(80, 'x')) }, 'resources', /would take \d+ bytes in every token/],
  ])('%s: refused with the field, nothing stored', async (_name, constraints, field, message) => {
    const before = (await server.auth.clientConfigurations.list('acme')).length;
    const error = await create(constraints).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect((error as ValidationError).description).toMatch(message);
    expect((await server.auth.clientConfigurations.list('acme')).length).toBe(before);
  });

  it('a tenant ID over 100 characters is refused', async () => {
    await expect(create({}, 't'.repeat(101))).rejects.toMatchObject({ field: 'tenant' });
  });

  it.each([
    ['a baseUrl over 200 characters', { baseUrl: `https://auth.example.com/${'p'.repeat(200)}` }, /baseUrl: must be at most 200 characters/],
    ['a scope name over 64 characters', { apis: [{ id: 'x', name: 'X', scopes: { [`s${'c'.repeat(64)}`]: 'x' } }] }, /at most 64 characters/],
    ['a catalogue whose scopes would not fit in a token', {
      apis: [{ id: 'x', name: 'X', scopes: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`scope-${i}`.padEnd(60, 'z'), 'x'])) }],
    }, /a token carrying all of them must stay within 2048/],
    ['an API id over 32 characters', { apis: [{ id: 'a'.repeat(33), name: 'X', scopes: { 'x.read': 'x' } }] }, /at most 32 characters/],
  ])('options: %s', async (_name, options, message) => {
    await expect(startServer(options)).rejects.toThrow(message);
  });

  it('the largest token the limits allow is under 8 KB: every scope, the largest constraints, the longest baseUrl and tenant', async () => {
    // A catalogue as large as allowed: scope names of 64 characters up to the scope-claim budget,
    // and an API with the most dimensions.
    const scopes: Record<string, string> = {};
    for (let i = 0; ; i += 1) {
      const name = `s${String(i).padStart(2, '0')}.`.padEnd(64, 'x');
      const claim = [...Object.keys(scopes), name, 'openid', 'offline_access', 'profile', 'email', 'manage.integrations'].join(' ');
      if (Buffer.byteLength(claim) > 2048) break;
      scopes[name] = 'x';
    }
    const dimensions = Array.from({ length: 8 }, (_, i) => `dimension-number-${i}`.padEnd(32, 'd'));
    const apis = [{ id: 'a'.repeat(32), name: 'Largest', scopes, constraints: dimensions }];
    // The longest baseUrl (it is in every token twice): the server is reached at its socket, as
    // behind a proxy that strips the path.
    const baseUrl = 'https://auth.example.com/'.padEnd(200, 'b');
    const largest = await startServer({ apis, baseUrl });
    try {
      expect(largest.auth.issuer.length).toBe(200 + '/oauth2'.length);
      // Constraint values up to the claim budget.
      const constraints: Record<string, string[]> = {};
      let d = 0;
      for (let i = 0; ; i += 1) {
        const dimension = dimensions[d % dimensions.length]!;
        const next = { ...constraints, [dimension]: [...(constraints[dimension] ?? []), `${i}`.padEnd(100, 'v')] };
        if (Buffer.byteLength(JSON.stringify({ [apis[0]!.id]: next })) > 3072) break;
        Object.assign(constraints, next);
        d += 1;
      }
      const client = await largest.auth.clientConfigurations.create({
        tenant: 't'.repeat(100), name: 'n', category: 'c',
        resources: { [apis[0]!.id]: { scopes: Object.keys(scopes), constraints } },
      });
      // The server is reached at its socket; its issuer carries the long path (a proxy strips it).
      const answer = await postToken(`${largest.baseUrl}/oauth2`, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) });
      expect(answer.status).toBe(200);
      const token = answer.body.access_token as string;
      const jwks = (await (await fetch(`${largest.baseUrl}/oauth2/jwks`)).json()) as JSONWebKeySet;
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks));
      expect((payload.scope as string).split(' ')).toHaveLength(Object.keys(scopes).length);
      expect(Buffer.byteLength(token)).toBeLessThan(MAX_TOKEN_BYTES);
      // The figure in docs/configuration.md ("Limits"): the limits are used up, not loosely met.
      expect(Buffer.byteLength(token)).toBeGreaterThan(7000);
    } finally {
      await largest.stop();
    }
  });
});
