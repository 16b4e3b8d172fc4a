/**
 * CONSTRAINTS: data filters a machine client carries in its tokens, so that a resource server can
 * narrow what the client sees (e.g. only the users of one group).
 *
 * - Registration: per API the client may call, per dimension that API declares, a non-empty list
 *   of allowed values (each at most MAX_CONSTRAINT_VALUE_LENGTH characters); the whole claim stays
 *   within MAX_CONSTRAINTS_CLAIM_BYTES.
 * - Token time: a token carries the constraints of the APIs it got at least one scope of, and no
 *   others; constraints never come from a request.
 * - Resource servers apply them (the kit: src/resource-server/constraints.ts); an API without
 *   constraints for the client sees it unfiltered.
 */
import type { ApiCatalog } from './catalog.js';
import { ValidationError } from './errors.js';

/** Data filters: `{ [dimension]: allowed values }` for one API. */
export type DimensionFilters = Record<string, string[]>;
/** Data filters per API, as carried in the `constraints` claim: `{ [apiId]: { [dimension]: values } }`. */
export type Constraints = Record<string, DimensionFilters>;

/** The longest constraint value, in characters. */
export const MAX_CONSTRAINT_VALUE_LENGTH = 100;
/**
 * The largest `constraints` claim a client configuration may make, in bytes of JSON: what keeps
 * the largest access token under 8 KB (docs/configuration.md, "Limits").
 */
export const MAX_CONSTRAINTS_CLAIM_BYTES = 3072;

/** The size of a `constraints` claim, in bytes of JSON (UTF-8), as the token carries it. */
export function constraintsClaimBytes(constraints: Constraints): number {
  return Buffer.byteLength(JSON.stringify(constraints), 'utf8');
}

/**
 * Registration time: a client's constraints for one API. Only dimensions the API declares, each
 * with a non-empty list of non-empty strings of at most MAX_CONSTRAINT_VALUE_LENGTH characters.
 * (The whole claim's size is checked over all APIs, checkConstraintsSize.)
 */
export function validateConstraints(
  catalog: ApiCatalog,
  apiId: string,
  filters: DimensionFilters,
  field: string,
): DimensionFilters {
  const api = catalog.api(apiId);
  if (!api) throw new ValidationError(field, `unknown API '${apiId}'`);
  const result: DimensionFilters = {};
  for (const [dimension, values] of Object.entries(filters)) {
    if (!api.constraints.includes(dimension)) {
      const known = api.constraints.length ? api.constraints.join(', ') : 'none';
      throw new ValidationError(
        `${field}.${dimension}`,
        `API "${apiId}" does not support the constraint "${dimension}" (supported: ${known})`,
      );
    }
    if (!Array.isArray(values) || values.length === 0) {
      throw new ValidationError(`${field}.${dimension}`, 'at least one value is required');
    }
    for (const value of values) {
      if (typeof value !== 'string' || value.trim() === '') {
        throw new ValidationError(`${field}.${dimension}`, 'values must be non-empty strings');
      }
      if (value.length > MAX_CONSTRAINT_VALUE_LENGTH) {
        throw new ValidationError(`${field}.${dimension}`, `values must be at most ${MAX_CONSTRAINT_VALUE_LENGTH} characters`);
      }
    }
    result[dimension] = [...new Set(values)];
  }
  return result;
}

/**
 * Token time: the constraints a token carries are those of the APIs for which at least one scope
 * was granted. Constraints never come from the request (a client cannot widen its own data filters:
 * no token request parameter carries them).
 */
export function constraintsForGrantedScopes(
  catalog: ApiCatalog,
  configured: Constraints,
  grantedScopes: Iterable<string>,
): Constraints | undefined {
  let result: Constraints | undefined;
  for (const scope of grantedScopes) {
    const apiId = catalog.apiOfScope(scope)?.id;
    if (apiId === undefined || result?.[apiId]) continue;
    const filters = configured[apiId];
    if (filters && Object.keys(filters).length) (result ??= {})[apiId] = filters;
  }
  return result;
}

/**
 * Registration time, over all APIs of a client: the constraints claim must stay within
 * MAX_CONSTRAINTS_CLAIM_BYTES, so that no token of the client outgrows what resource servers
 * accept in a header (a 6,000-value filter made 100 KB tokens).
 */
export function checkConstraintsSize(constraints: Constraints, field: string): void {
  const bytes = constraintsClaimBytes(constraints);
  if (bytes > MAX_CONSTRAINTS_CLAIM_BYTES) {
    throw new ValidationError(field, `the constraints would take ${bytes} bytes in every token; at most ${MAX_CONSTRAINTS_CLAIM_BYTES} are allowed`);
  }
}
