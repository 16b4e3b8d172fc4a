import type Provider from 'oidc-provider';
import type { RecordStore } from '../../adapters/types.js';
import { APP_REGISTRATION } from '../records/app-registrations.js';
import { CLIENT_CONFIGURATION } from '../records/client-configurations.js';

const CLIENT_KINDS: ReadonlySet<string> = new Set([CLIENT_CONFIGURATION, APP_REGISTRATION]);

type EngineClient = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/**
 * Keeps the engine's Client objects by client ID, so that a token request costs no store round
 * trip, no metadata hashing and no re-validation (the engine's own cache holds 100 clients and
 * reads the adapter on every request). An entry goes as soon as its record changes on any
 * instance (RecordStore.watch), nothing is cached while changes cannot be watched, and no entry
 * outlives 10 s: a rotated secret or a deleted client stops working at once everywhere.
 */
/** What the cache still knows of a client while the store is away: where it may be sent back. */
export interface KnownClients {
  /** The redirect URIs of a client seen in the last 10 minutes, unless it changed since. */
  redirectUris(clientId: string): readonly string[] | undefined;
}

const KNOWN_FOR_MS = 10 * 60_000;

export function cacheClientLookups(provider: Provider, records: RecordStore, maxEntries = 10_000, maxAgeMs = 10_000): KnownClients {
  // Entries also age out: should the change feed break silently (a half-open connection), a
  // stale client could otherwise live on; with this bound, for at most maxAgeMs.
  const cache = new Map<string, { client: EngineClient; until: number }>();
  // Kept through an outage of the change feed (not through a change of the client): only to send a
  // browser back to its app with temporarily_unavailable while the store is down.
  const known = new Map<string, { redirectUris: readonly string[]; until: number }>();
  let generation = 0;
  records.watch((change) => {
    // Consents change at every sign-in: they are not clients, and must not spoil lookups in flight.
    if (change.kind !== undefined && !CLIENT_KINDS.has(change.kind)) return;
    generation += 1;
    if (change.kind === undefined) cache.clear();
    else {
      cache.delete(change.id);
      known.delete(change.id);
    }
  });
  const find = provider.Client.find.bind(provider.Client);
  provider.Client.find = async function findCached(id: string) {
    const cached = cache.get(id);
    if (cached && cached.until > Date.now()) return cached.client;
    const before = generation;
    const client = await find(id);
    if (client) {
      if (known.size >= maxEntries) known.delete(known.keys().next().value as string);
      known.delete(id);
      known.set(id, { redirectUris: client.redirectUris ?? [], until: Date.now() + KNOWN_FOR_MS });
    }
    // A change while we read may be older or newer than what we read: do not keep it.
    if (client && records.watching && generation === before) {
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.delete(id);
      cache.set(id, { client, until: Date.now() + maxAgeMs });
    }
    return client;
  };
  return {
    redirectUris(clientId) {
      const entry = known.get(clientId);
      return entry && entry.until > Date.now() ? entry.redirectUris : undefined;
    },
  };
}
