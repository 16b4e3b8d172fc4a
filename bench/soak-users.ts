/**
 * What the soak (bench/soak-traffic.ts) and the bench server processes (bench/ours-server.ts)
 * agree on: the password of the bench users and the variable that starts a server for the soak.
 */

/** Every bench user's password at the bench's account store (a bench fixture, not a secret). */
export const SOAK_PASSWORD = 'soak-password-of-every-bench-user';

/**
 * Set in a bench server's environment to the public base URL every instance of the soak shares (as
 * behind a load balancer; the soak sends each request to one instance's own port); such a server
 * also trusts X-Forwarded-For (`proxy: true`), so that each soak browser counts as an address of
 * its own at the per-address limits.
 */
export const SOAK_ENVIRONMENT = 'BENCH_SOAK_SERVER';

/** The soak's public base URL: no such host; requests go to an instance's port, with this as their origin. */
export const SOAK_BASE_URL = 'http://auth.soak.test';
