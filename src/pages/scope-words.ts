import type { ApiCatalog } from '../../policies/catalog.js';
import { MANAGEMENT_SCOPE, MANAGEMENT_SCOPE_WORDS } from '../../policies/management.js';

/** OpenID Connect scopes in words, for the consent page and the consent API. */
export const OIDC_SCOPE_WORDS: Record<string, string> = {
  openid: 'Know who you are (your user ID)',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Stay connected while you are away',
};

/** What a scope allows, in words, and the API it belongs to (none for OIDC scopes). */
export function scopeWords(catalog: ApiCatalog, scope: string): { description: string; api?: string } {
  if (scope === MANAGEMENT_SCOPE) return { description: MANAGEMENT_SCOPE_WORDS, api: 'Integration setup' };
  const api = catalog.apiOfScope(scope);
  return api ? { description: api.scopes[scope] ?? scope, api: api.name } : { description: OIDC_SCOPE_WORDS[scope] ?? scope };
}
