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
  /** scope name → what it allows, in words (shown on the consent page) */
  scopes: Record<string, string>;
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

  get apis(): ApiDefinition[] {
    return [...this.byId.values()];
  }

  get scopes(): string[] {
    return [...this.byScope.keys()];
  }
}
