import type { ApiCatalog } from '../../policies/catalog.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { en, type Messages } from '../i18n/messages/en.js';

/** The text of each OpenID Connect scope, in a language's messages. */
const OIDC_SCOPE_MESSAGES: Record<string, keyof Messages> = {
  openid: 'scopeOpenid',
  profile: 'scopeProfile',
  email: 'scopeEmail',
  offline_access: 'scopeOfflineAccess',
};

/** OpenID Connect scopes in words (English), for the consent API. */
export const OIDC_SCOPE_WORDS: Record<string, string> = Object.fromEntries(
  Object.entries(OIDC_SCOPE_MESSAGES).map(([scope, key]) => [scope, en[key] as string]),
);

/**
 * What a scope allows, in words, and the API it belongs to (none for OIDC scopes), in the language
 * of `t` and `lang` (English by default: the consent API answers in English).
 */
export function scopeWords(catalog: ApiCatalog, scope: string, t: Messages = en, lang = 'en'): { description: string; api?: string } {
  if (scope === MANAGEMENT_SCOPE) return { description: t.scopeManagement, api: t.scopeManagementApi };
  const api = catalog.apiOfScope(scope);
  if (api) return { description: catalog.scopeWords(scope, lang) ?? scope, api: api.name };
  const key = Object.hasOwn(OIDC_SCOPE_MESSAGES, scope) ? OIDC_SCOPE_MESSAGES[scope] : undefined;
  return { description: key ? (t[key] as string) : scope };
}
