import { ValidationError } from '../../src/index.js';
import { testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';

const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const carol = { tenant: 'acme', sub: 'carol' };

/**
 * The operator's name in the audit trail (`actor`): `auth.factors.reset({ tenant, sub, actor })`
 * and `auth.signIns.unlock({ username, actor })` record it as the id of the `operator` actor; a
 * name that is not one is refused before anything changes. The contract's calls without it stay.
 */
describe("the library's operator calls with an actor", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([{ ...carol, password: 'pw' }]), factorKeys: [FACTOR_KEY] });
  });
  afterAll(() => server.stop());

  const latest = async (type: 'factor.reset' | 'sign_in.unlocked', tenant: string | null) => (await server.auth.audit.list({ tenant, type })).events[0];

  it('auth.factors.reset records the named operator; without a name, the operator alone', async () => {
    await server.auth.factors.enrollTotp(carol);
    expect(await server.auth.factors.reset({ ...carol, actor: 'jane@ops.example' })).toBe(true);
    expect(await latest('factor.reset', 'acme')).toMatchObject({ actor: { type: 'operator', id: 'jane@ops.example' }, target: { type: 'user', id: 'carol' } });
    await server.auth.factors.enrollTotp(carol);
    expect(await server.auth.factors.reset(carol)).toBe(true);
    expect((await latest('factor.reset', 'acme'))!.actor).toEqual({ type: 'operator' });
  });

  it.each([
    ['an empty name', ''],
    ['a blank name', '   '],
    ['a name of 129 characters', 'x'.repeat(129)],
    ['a name with a bidirectional override', 'jane\u202e'],
    ['a name that is not a string', 7],
  ])('refuses %s (ValidationError, field actor) and changes nothing', async (_name, actor) => {
    await server.auth.factors.enrollTotp(carol);
    const events = (await server.auth.audit.list({ tenant: 'acme', type: 'factor.reset' })).events.length;
    const refused = server.auth.factors.reset({ ...carol, actor: actor as string });
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    await expect(refused).rejects.toMatchObject({ field: 'actor' });
    expect(await server.auth.factors.list(carol)).toHaveLength(1);
    expect((await server.auth.audit.list({ tenant: 'acme', type: 'factor.reset' })).events).toHaveLength(events);
    const unlock = server.auth.signIns.unlock({ username: 'carol', actor: actor as string });
    await expect(unlock).rejects.toMatchObject({ field: 'actor' });
  });

  it('auth.signIns.unlock records the named operator', async () => {
    expect(await server.auth.signIns.unlock({ username: 'carol', actor: 'jane@ops.example' })).toEqual({ unlocked: false });
    expect(await latest('sign_in.unlocked', 'acme')).toMatchObject({ actor: { type: 'operator', id: 'jane@ops.example' }, target: { type: 'user', id: 'carol' } });
  });
});
