/**
 * THE API CATALOG: the platform's APIs, each a named group of scopes (with the words the consent
 * page shows for them) and the data-filter dimensions it supports. Every scope a token can carry
 * at the resource is a scope of one API of the catalog (or the management right); a scope name
 * belongs to exactly one API.
 */

/** The APIs of the platform: each a named group of scopes, with the filter dimensions it supports. */
export interface ApiDefinition {
  id: string;
  name: string;
  /** scope name → what it allows, in words (shown on the consent page), in English */
  scopes: Record<string, string>;
  /** scope name → language tag → what it allows in that language (the consent page's language). */
  scopeTranslations?: Record<string, Record<string, string>>;
  /** data-filter dimensions the API supports, e.g. `group`, `department` */
  constraints: string[];
}

export class ApiCatalog {
  private readonly byId = new Map<string, ApiDefinition>();
  private readonly byScope = new Map<string, ApiDefinition>();

  constructor(apis: readonly ApiDefinition[]) {
    for (const api of apis) {
      this.byId.set(api.id, api);
      for (const scope of Object.keys(api.scopes)) this.byScope.set(scope, api);
    }
  }

  api(id: string): ApiDefinition | undefined {
    return this.byId.get(id);
  }

  apiOfScope(scope: string): ApiDefinition | undefined {
    return this.byScope.get(scope);
  }

  /**
   * What a scope of an API allows, in words, in the language `lang` (`de-CH` finds `de`), else in
   * English; undefined for a scope of no API.
   */
  scopeWords(scope: string, lang = 'en'): string | undefined {
    const api = this.byScope.get(scope);
    if (!api) return undefined;
    const translations = api.scopeTranslations?.[scope];
    if (translations) {
      const lower = lang.toLowerCase();
      for (const [tag, words] of Object.entries(translations)) if (tag.toLowerCase() === lower) return words;
      const primary = lower.split('-')[0];
      for (const [tag, words] of Object.entries(translations)) if (tag.toLowerCase() === primary) return words;
    }
    return api.scopes[scope];
  }

  get apis(): ApiDefinition[] {
    return [...this.byId.values()];
  }

  get scopes(): string[] {
    return [...this.byScope.keys()];
  }
}
