/*
 * node-oidc-provider's per-instance state, imported by path (the package has no exports map): the
 * one internal src/engine/patches.ts reads to follow a key set that changes while it runs.
 */
declare module 'oidc-provider/lib/helpers/weak_cache.js' {
  /** The engine's state of one provider instance. */
  export default function instance(provider: object): {
    keystore: { clear(): void; add(key: unknown): void; [Symbol.iterator](): Iterator<Record<string, unknown>> };
    jwks: { keys: Array<Record<string, unknown>> };
  };
}
