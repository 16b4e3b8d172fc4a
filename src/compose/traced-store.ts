import type { Store } from '../../adapters/types.js';
import type { TraceAttributes, Tracing } from '../observability/tracing.js';

/** The engine adapter's calls that get a span (each is one store operation). */
const ENGINE_CALLS = ['upsert', 'find', 'findWithGrant', 'findByUid', 'findByUserCode', 'consume', 'consumeCompleting', 'unconsume', 'confirm', 'markReplayed', 'consumption', 'destroy', 'revokeByGrantId'];
const RECORD_CALLS = ['get', 'getVersioned', 'create', 'put', 'replace', 'delete', 'list'];
const COUNTER_CALLS = ['increment', 'peek', 'clear'];
const AUDIT_CALLS = ['append', 'list'];

type Method = (...args: unknown[]) => unknown;

/**
 * `target` with each of `calls` in a store span (`store {prefix}{call}`), inside a trace only
 * (src/observability/tracing.ts); everything else as it is. A span carries the store's kind, the
 * operation and `collection` of the call (the engine's model, a record kind): never a key or an
 * id, which for codes and tokens are the codes and tokens themselves.
 */
function traced<T extends object>(target: T, prefix: string, calls: readonly string[], tracing: Tracing, system: string, collection: (args: unknown[]) => string | undefined, parts?: ReadonlyMap<PropertyKey, unknown>): T {
  const own = new Map<PropertyKey, unknown>(parts);
  for (const call of calls) {
    const method = (target as Record<string, unknown>)[call];
    if (typeof method !== 'function') continue;
    const name = `store ${prefix}${call}`;
    own.set(call, (...args: unknown[]) => {
      const model = collection(args);
      const attributes: TraceAttributes = model === undefined
        ? { 'db.system.name': system, 'db.operation.name': `${prefix}${call}` }
        : { 'db.system.name': system, 'db.operation.name': `${prefix}${call}`, 'db.collection.name': model };
      return tracing.storeCall(name, attributes, () => (method as Method).apply(target, args) as Promise<unknown>);
    });
  }
  return new Proxy(target, {
    get(object, property) {
      if (own.has(property)) return own.get(property);
      // Read on the object itself: its getters and private fields see it, not the proxy.
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const bound = (value as Method).bind(object);
      own.set(property, bound);
      return bound;
    },
  });
}

/**
 * The store with its calls traced, when tracing is on (the store itself when it is off: nothing
 * in the way). The adapters stay as they are; the wrappers of each engine model are made once.
 */
export function tracedStore(store: Store, tracing: Tracing): Store {
  if (!tracing.enabled) return store;
  const system = store.type;
  const adapters = new Map<string, ReturnType<Store['engine']>>();
  const engine = (model: string): ReturnType<Store['engine']> => {
    let adapter = adapters.get(model);
    if (!adapter) adapters.set(model, (adapter = traced(store.engine(model), '', ENGINE_CALLS, tracing, system, () => model)));
    return adapter;
  };
  const kindOf = (args: unknown[]): string | undefined => (typeof args[0] === 'string' ? args[0] : undefined);
  const records = traced(store.records, 'records.', RECORD_CALLS, tracing, system, kindOf);
  const counters = traced(store.counters, 'counters.', COUNTER_CALLS, tracing, system, () => undefined);
  const audit = traced(store.audit, 'audit.', AUDIT_CALLS, tracing, system, () => undefined);
  const parts = new Map<PropertyKey, unknown>([['engine', engine], ['records', records], ['counters', counters], ['audit', audit]]);
  return traced(store, '', [], tracing, system, () => undefined, parts);
}
