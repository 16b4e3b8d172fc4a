import type { DimensionFilters } from '../../policies/constraints.js';
import type { AccessTokenContext } from './verifier.js';

/**
 * The data filters a token carries for one API (undefined: no filter). A token without a scope of
 * that API carries none, which is why an API must check scopes first (requireScopes).
 */
export function constraintsFor(auth: AccessTokenContext, apiId: string): DimensionFilters | undefined {
  const filters = auth.constraints[apiId];
  return filters && Object.keys(filters).length ? filters : undefined;
}

/**
 * Whether a record passes: for every constrained dimension, its value is one of the allowed ones
 * (for a multi-valued dimension, at least one of its values). A record without the dimension fails.
 */
export function passesConstraints(
  filters: DimensionFilters | undefined,
  valueOf: (dimension: string) => unknown,
): boolean {
  if (!filters) return true;
  return Object.entries(filters).every(([dimension, allowed]) => {
    const value = valueOf(dimension);
    const values = Array.isArray(value) ? value : [value];
    return values.some((item) => typeof item === 'string' && allowed.includes(item));
  });
}

/** Keeps the records the token may see; `valueOf` reads a dimension of a record (default: a property). */
export function filterByConstraints<T>(
  auth: AccessTokenContext,
  apiId: string,
  records: readonly T[],
  valueOf: (record: T, dimension: string) => unknown = (record, dimension) => (record as Record<string, unknown>)[dimension],
): T[] {
  const filters = constraintsFor(auth, apiId);
  return records.filter((record) => passesConstraints(filters, (dimension) => valueOf(record, dimension)));
}
