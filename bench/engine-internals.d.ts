/*
 * node-oidc-provider's own in-memory adapter and its LRU, imported by path (the package has no
 * exports map): the bare engine's reference store, given an LRU large enough for a code supply.
 */
declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { Adapter } from 'oidc-provider';
  import type LRU from 'oidc-provider/lib/helpers/lru.js';

  const MemoryAdapter: new (model: string, store?: LRU, clockTolerance?: number) => Adapter;
  export default MemoryAdapter;
}
