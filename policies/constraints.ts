import type { ApiCatalog } from '../src/catalog.js';
import { ValidationError } from '../src/errors.js';

/** Data filters: `{ [dimension]: allowed values }` for one API. */
export type DimensionFilters = Record<string, string[]>;
/** Data filters per API, as carried in the `constraints` claim: `{ [apiId]: { [dimension]: values } }`. */
export type Constraints = Record<string, DimensionFilters>;

/**
 * Registration time: a client's constraints for one API. Only dimensions the API declares, each
 * with a non-empty list of non-empty strings.
 */
export function validateConstraints(
  catalog: ApiCatalog,
  apiId: string,
  filters: DimensionFilters,
  field: string,
): DimensionFilters {
  const api = catalog.api(apiId);
  if (!api) throw new ValidationError(field, `unknown API "${apiId}"`);
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
    }
    result[dimension] = [...new Set(values)];
  }
  return result;
}

/**
 * Token time: the constraints a token carries are those of the APIs for which at least one scope
 * was granted. Constraints never come from the request (spec: not sent in any token request).
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
