import { CLIENT_CACHE_SECONDS } from '../../policies/lifetimes.js';
import type Provider from 'oidc-provider';
import { StoreUnavailable, type RecordStore } from '../../adapters/types.js';
import { APP_REGISTRATION } from '../records/app-registrations.js';
import { CLIENT_CONFIGURATION } from '../records/client-configurations.js';
import { TENANT_SETTINGS } from '../records/tenant-settings.js';

const CLIENT_KINDS: ReadonlySet<string> = new Set([CLIENT_CONFIGURATION, APP_REGISTRATION]);

/** The engine's Client object. */
export type EngineClient = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/** What the cache still knows of a client while the store is away: where it may be sent back. */
export interface KnownClients {
  /** The redirect URIs of a client seen in the last 10 minutes, unless it changed since. */
  redirectUris(clientId: string): readonly string[] | undefined;
}


/**
 * Keeps the engine's Client objects by client ID, so that a token request costs no store round
 * trip, no metadata hashing and no re-validation (the engine's own cache holds 100 clients and
 * reads the adapter on every request). An entry goes as soon as its record changes on any
 * instance (RecordStore.watch), nothing is cached while changes cannot be watched, and no entry
 * outlives 10 s: a rotated secret or a deleted client stops working at once here, and on the other
 * instances as soon as the change feed tells them (milliseconds). While the
 * store cannot be read (StoreUnavailable), an entry is served for up to 10 s more.
 * Installed in front of the engine's `Client.find` by src/engine/patches.ts.
 */
export class ClientLookups implements KnownClients {
  // Entries also age out: should the change feed break silently (a half-open connection), a
  // stale client could otherwise live on; with this bound, for at most maxAgeMs.
  readonly #cache = new Map<string, { client: EngineClient; until: number }>();
  // Kept through an outage of the change feed (not through a change of the client): only to send a
  // browser back to its app with temporarily_unavailable while the store is down.
  readonly #known = new Map<string, { redirectUris: readonly string[]; until: number }>();
  #generation = 0;

  constructor(
    private readonly records: RecordStore,
    private readonly maxEntries = 10_000,
    private readonly maxAgeMs = 10_000,
  ) {
    records.watch((change) => {
      // A tenant's own settings hold the security profile its clients' metadata carries
      // (client-directory.ts): a change of them is rare and may concern any client of the tenant.
      if (change.kind === TENANT_SETTINGS) {
        this.#generation += 1;
        this.#cache.clear();
        return;
      }
      // Consents change at every sign-in: they are not clients, and must not spoil lookups in flight.
      if (change.kind !== undefined && !CLIENT_KINDS.has(change.kind)) return;
      this.#generation += 1;
      if (change.kind === undefined) this.#cache.clear();
      else {
        this.#cache.delete(change.id);
        this.#known.delete(change.id);
      }
    });
  }

  /** `find` (the engine's), answered from the cache when it can be. */
  cached(find: (id: string) => Promise<EngineClient | undefined>): (id: string) => Promise<EngineClient | undefined> {
    return async (id) => {
      const cached = this.#cache.get(id);
      if (cached && cached.until > Date.now()) return cached.client;
      const before = this.#generation;
      let client: EngineClient | undefined;
      try {
        client = await find(id);
      } catch (error) {
        // The store cannot answer for this client now (on a cluster: its record's master failing
        // over). A client read within the last cache lifetime, and not changed since (a change
        // removes it at once), is served as it was, for at most one more lifetime: one master's
        // loss must not stop every client it holds. Anything else is not hidden.
        if (cached && error instanceof StoreUnavailable && cached.until + this.maxAgeMs > Date.now()) return cached.client;
        throw error;
      }
      if (client) remember(this.#known, id, { redirectUris: client.redirectUris ?? [], until: Date.now() + CLIENT_CACHE_SECONDS * 1000 }, this.maxEntries);
      // A change while we read may be older or newer than what we read: do not keep it.
      if (client && this.records.watching && this.#generation === before) {
        remember(this.#cache, id, { client, until: Date.now() + this.maxAgeMs }, this.maxEntries);
      }
      return client;
    };
  }

  redirectUris(clientId: string): readonly string[] | undefined {
    const entry = this.#known.get(clientId);
    return entry && entry.until > Date.now() ? entry.redirectUris : undefined;
  }
}

/** Keeps `value` as the newest entry of a map bounded to `maxEntries` (the oldest goes first). */
function remember<T>(map: Map<string, T>, id: string, value: T, maxEntries: number): void {
  if (map.size >= maxEntries) map.delete(map.keys().next().value as string);
  map.delete(id);
  map.set(id, value);
}
