import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RecordStore } from '../../adapters/types.js';
import { emailDomainProblem, normalizeDomain } from '../../policies/email-domains.js';
import { Conflict, NotFound, ValidationError } from '../../policies/errors.js';
import { issuerProblem, isLoopbackHost, type IssuerAuthor } from '../../policies/upstream-issuer.js';
import { changed } from '../audit/events.js';
import { OPERATOR, type AuditContext, type AuditEventType, type AuditTrail } from '../audit/trail.js';
import { changedFields } from '../records/change.js';
import type { Sealer } from '../records/sealed.js';
import { displayName, parseInput } from '../records/validation.js';
import { FederatedLinks } from './federated-links.js';

/*
 * CONNECTIONS: a tenant's upstream OpenID Connect providers (Entra ID, Okta, Google Workspace...),
 * through which its users sign in (enterprise sign-in, docs/federation.md).
 *
 * - One record per connection (kind `connection`), listed by its tenant through an index of the
 *   tenant's connections (group: the tenant): a tenant's listing never reads another's.
 * - The email domains a connection owns are indexed one record per domain (kind
 *   `connection-domain`, created only where none is): a domain belongs to one connection of one
 *   tenant, two tenants claiming it at once cannot both win (policies/email-domains.ts).
 * - A domain is VERIFIED when the operator named it (the library, the CLI: the operator vouches
 *   for who owns it), unverified when a tenant's admin did (nobody checked that her organisation
 *   owns it). An unverified domain serves its own tenant only: home-realm discovery at that
 *   tenant's apps, and the addresses its connection's identities may carry. Only a verified one
 *   sends users of apps open to every tenant (the platform's) to the connection, and makes another
 *   tenant's connection refuse identities at it. And the operator's claim takes a domain from a
 *   connection that holds it unverified (audited): a tenant that claimed another organisation's
 *   domain first neither blocks it nor receives its users.
 * - The client secret at the provider is sealed (AES-GCM under the factor keys, bound to the
 *   connection's id) and returned by no call: a caller learns only whether there is one.
 * - Every change is audited before it is made (`connection.created`/`updated`/`deleted`, in the
 *   tenant's trail, never with the secret) and compared-and-set.
 * - A connection deleted takes its remembered links (src/federation/federated-links.ts) with it.
 * - The issuer is ruled by who names it (policies/upstream-issuer.ts): the operator may name a
 *   loopback provider (development, tests), a tenant only an https public host.
 */

/** The kind of the connection records in the RecordStore. */
export const CONNECTION = 'connection';
/** The index of a tenant's connections (group: the tenant). */
const CONNECTION_OF_TENANT = 'connection-of-tenant';
/** The index of the email domains (one record per domain, all in one group). */
const CONNECTION_DOMAIN = 'connection-domain';
const DOMAINS_GROUP = 'domains';
/** The most connections one tenant may have. */
export const MAX_CONNECTIONS_PER_TENANT = 20;
const ATTEMPTS = 5;

/** How our server authenticates to the provider's token endpoint. */
export const UPSTREAM_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
/** How our server authenticates to the provider's token endpoint (`private_key_jwt`: with our signing key, published at our `jwks_uri`). */
export type UpstreamAuthMethod = (typeof UPSTREAM_AUTH_METHODS)[number];

/** The claims a connection may map from other names of the provider's (claimMapping's keys). */
export const MAPPABLE_CLAIMS = ['sub', 'email', 'email_verified', 'name', 'given_name', 'family_name', 'preferred_username', 'locale'] as const;
/** A claim a connection may map (claimMapping's keys). */
export type MappableClaim = (typeof MAPPABLE_CLAIMS)[number];
/** Our claim → the provider's claim that holds it, e.g. `{ email: 'upn' }` for an ADFS. */
export type ClaimMapping = Partial<Record<MappableClaim, string>>;

/** The scopes asked of a provider when the connection names none. */
export const DEFAULT_UPSTREAM_SCOPES: readonly string[] = ['openid', 'email', 'profile'];

/** A connection as the library, the management API, the CLI and the portal show it (never its secret). */
export interface Connection {
  id: string;
  /** The tenant whose users sign in through it. */
  tenant: string;
  /** Shown on the sign-in page: "Continue with <name>". */
  name: string;
  /** The provider's issuer identifier (its discovery document is at `{issuer}/.well-known/openid-configuration`). */
  issuer: string;
  /** Our client ID at the provider. */
  clientId: string;
  /** How we authenticate at its token endpoint. */
  tokenEndpointAuthMethod: UpstreamAuthMethod;
  /** Whether a client secret is kept (sealed; never shown again). */
  hasClientSecret: boolean;
  /** The scopes asked of the provider (`openid` always among them). */
  scopes: string[];
  /** The email domains the connection owns (home-realm discovery; an identity's email must be at one of them). */
  domains: string[];
  /**
   * The domains of `domains` the operator vouched for (named through the library or the CLI);
   * the others a tenant's admin named, and they serve that tenant's own apps only (see Connections).
   */
  verifiedDomains: string[];
  /** Our claim → the provider's claim that holds it (absent: the same name). */
  claimMapping: ClaimMapping;
  /**
   * Our redirect URI for this connection, to register at the provider
   * (`{baseUrl}{pathPrefix}/oauth2/federation/callback/{id}`: one per connection, against mix-ups).
   * Absent where the server's URL is not known (the CLI works on the store alone).
   */
  redirectUri?: string;
  /** Whether signing out of our server also signs the user out at the provider (when it has an end-session endpoint). */
  signOutUpstream: boolean;
  /** The provider's `acr` values that mean a multi-factor sign-in there (besides `amr` holding `mfa`). */
  mfaAcrValues: string[];
  createdAt: string;
  updatedAt: string;
}

/** What `connections.create()` takes. */
export interface ConnectionInput {
  tenant: string;
  name: string;
  issuer: string;
  clientId: string;
  /** Our client secret at the provider (absent: `private_key_jwt` with our signing key). Sealed, never returned. */
  clientSecret?: string;
  /** Default: `client_secret_basic` with a secret, `private_key_jwt` without. */
  tokenEndpointAuthMethod?: UpstreamAuthMethod;
  /** Default `openid email profile`; `openid` is added when missing. */
  scopes?: string[];
  domains: string[];
  claimMapping?: ClaimMapping;
  signOutUpstream?: boolean;
  mfaAcrValues?: string[];
}

/** What `connections.update()` takes: any field but the tenant; absent fields stay as they are (`clientSecret: ''` removes the secret). */
export type ConnectionPatch = Partial<Omit<ConnectionInput, 'tenant'>>;

/** A connection as stored: with its sealed secret, and the issuer's host when the operator named it. */
interface StoredConnection extends Omit<Connection, 'hasClientSecret' | 'verifiedDomains' | 'redirectUri'> {
  verifiedDomains?: string[];
  sealedSecret?: string;
  /** Set when the operator (not a tenant) named the issuer: its host may be special-use (a loopback provider). */
  operatorIssuerHost?: string;
}

/** A connection with what the federation needs and no caller sees. @internal */
export interface ConnectionForSignIn extends Connection {
  /** The client secret, opened (undefined: none). */
  clientSecret: string | undefined;
  /** The host the operator named as issuer: requests to it may reach a special-use address. */
  trustedHost: string | undefined;
}

const token = (max: number) => z.string().trim().min(1, 'must not be empty').max(max).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** The fields of a connection and their limits (the management API's wire schema reuses them). */
export const CONNECTION_FIELDS = {
  name: displayName(100),
  issuer: z.string().trim().min(1, 'must not be empty').max(2000),
  clientId: token(512),
  clientSecret: z.string().max(1024).regex(/^[\x20-\x7e]*$/, 'must be printable ASCII'),
  tokenEndpointAuthMethod: z.enum(UPSTREAM_AUTH_METHODS),
  scopes: z.array(token(200)).max(20),
  domains: z.array(z.string().trim().max(253)).max(50),
  claimMapping: z.partialRecord(z.enum(MAPPABLE_CLAIMS), z.string().trim().regex(/^[A-Za-z0-9_:./-]{1,200}$/, 'must be a claim name')).refine(
    (mapping) => Object.keys(mapping).length <= MAPPABLE_CLAIMS.length,
  ),
  signOutUpstream: z.boolean(),
  mfaAcrValues: z.array(token(200)).max(10),
};
const createSchema = z.object({
  ...CONNECTION_FIELDS,
  tenant: displayName(),
  clientSecret: CONNECTION_FIELDS.clientSecret.min(1, 'must not be empty').optional(),
  tokenEndpointAuthMethod: CONNECTION_FIELDS.tokenEndpointAuthMethod.optional(),
  scopes: CONNECTION_FIELDS.scopes.optional(),
  claimMapping: CONNECTION_FIELDS.claimMapping.optional(),
  signOutUpstream: CONNECTION_FIELDS.signOutUpstream.optional(),
  mfaAcrValues: CONNECTION_FIELDS.mfaAcrValues.optional(),
}).strict();
const patchSchema = z.object(CONNECTION_FIELDS).partial().strict();

/** The purpose a connection's secret is sealed for: its own id (a sealed secret copied to another record does not open). */
const secretPurpose = (id: string) => `connection-secret:${id}`;

/** The tenants' connections in the store (`auth.connections`). */
export class Connections {
  readonly #listeners = new Set<(id: string | undefined) => void>();
  readonly #links: FederatedLinks;

  constructor(
    private readonly records: RecordStore,
    private readonly sealer: Sealer,
    private readonly audit?: AuditTrail,
    private readonly now: () => number = Date.now,
    /** The base of our callback URLs: a connection shows its redirect URI (`{callbackBase}/{id}`). */
    private readonly callbackBase?: string,
  ) {
    this.#links = new FederatedLinks(records, async (id) => (await this.stored(id)) !== undefined);
    records.watch((change) => {
      if (change.kind === undefined || change.kind === CONNECTION) for (const listener of this.#listeners) listener(change.kind === undefined ? undefined : change.id);
    });
  }

  private public(stored: StoredConnection): Connection {
    return toPublic(stored, this.callbackBase);
  }

  /** Calls `listener` when a connection changes on any instance (`undefined`: maybe any). @internal */
  onChange(listener: (id: string | undefined) => void): void {
    this.#listeners.add(listener);
  }

  /**
   * Connects a tenant's identity provider. The secret is sealed and never returned.
   * @param author Who names the issuer: the operator (library) may name a loopback provider.
   * @throws ValidationError naming the field (`issuer`, `domains.1` for a domain of another
   *   connection, ...; `tenant` when it has MAX_CONNECTIONS_PER_TENANT), Conflict when a domain
   *   kept changing under the claim.
   */
  async create(input: ConnectionInput, by: AuditContext = OPERATOR, author: IssuerAuthor = 'operator'): Promise<Connection> {
    const parsed = parseInput(createSchema, input, 'connection');
    const issuer = checkedIssuer(parsed.issuer, author);
    const domains = checkedDomains(parsed.domains, author);
    const method = parsed.tokenEndpointAuthMethod ?? (parsed.clientSecret ? 'client_secret_basic' : 'private_key_jwt');
    checkSecret(method, parsed.clientSecret !== undefined);
    const existing = await this.list(parsed.tenant);
    // A limit, not a race: Conflict would tell the caller to try again, which never helps.
    if (existing.length >= MAX_CONNECTIONS_PER_TENANT) throw new ValidationError('tenant', `has ${MAX_CONNECTIONS_PER_TENANT} connections, the most a tenant may have: delete one first`);
    const id = randomUUID();
    const time = new Date(this.now()).toISOString();
    const stored: StoredConnection = {
      id,
      tenant: parsed.tenant,
      name: parsed.name,
      issuer,
      clientId: parsed.clientId,
      tokenEndpointAuthMethod: method,
      scopes: scopesOf(parsed.scopes),
      domains,
      ...(author === 'operator' ? { verifiedDomains: domains } : {}),
      claimMapping: parsed.claimMapping ?? {},
      signOutUpstream: parsed.signOutUpstream ?? false,
      mfaAcrValues: parsed.mfaAcrValues ?? [],
      createdAt: time,
      updatedAt: time,
      ...(parsed.clientSecret ? { sealedSecret: this.sealer.seal(parsed.clientSecret, secretPurpose(id)) } : {}),
      ...(author === 'operator' ? { operatorIssuerHost: new URL(issuer).hostname } : {}),
    };
    // The record first, listed by nobody yet: a connection claiming one of its domains at the same
    // time then finds it and is refused (claimed before it existed, its entry would look stale and
    // be taken over: both would win). Refused or failed, nothing of it is kept, nothing audited.
    await this.records.put(CONNECTION, id, parsed.tenant, stored);
    try {
      await this.claimDomains(stored, domains, by);
      await this.audited('connection.created', by, stored, { name: stored.name, issuer, domains, verified_domains: stored.verifiedDomains ?? [], client_secret: stored.sealedSecret !== undefined });
    } catch (error) {
      await this.records.delete(CONNECTION, id);
      await this.releaseDomains(id, domains);
      throw error;
    }
    await this.records.put(CONNECTION_OF_TENANT, id, parsed.tenant, { id });
    return this.public(stored);
  }

  /** The connection, or undefined. */
  async get(id: string): Promise<Connection | undefined> {
    const stored = await this.stored(id);
    return stored && this.public(stored);
  }

  /** A tenant's connections, oldest first. */
  async list(tenant: string): Promise<Connection[]> {
    return (await this.storedOf(tenant)).map((stored) => this.public(stored));
  }

  /** The connection that owns an email domain (normalized first), or undefined; whether it is verified there: `verifiedDomains`. */
  async byDomain(domain: string): Promise<Connection | undefined> {
    const host = normalizeDomain(domain);
    if (!host) return undefined;
    const owner = await this.records.get<{ id: string }>(CONNECTION_DOMAIN, host);
    const stored = owner && (await this.stored(owner.id));
    // A domain index entry left by a connection changed meanwhile owns nothing.
    return stored && stored.domains.includes(host) ? this.public(stored) : undefined;
  }

  /** The connection with its secret opened, for the sign-in. @internal */
  async forSignIn(id: string): Promise<ConnectionForSignIn | undefined> {
    const stored = await this.stored(id);
    if (!stored) return undefined;
    const secret = stored.sealedSecret === undefined ? undefined : this.sealer.open<string>(stored.sealedSecret, secretPurpose(stored.id));
    const trustedHost = stored.operatorIssuerHost !== undefined && stored.operatorIssuerHost === new URL(stored.issuer).hostname ? stored.operatorIssuerHost : undefined;
    return { ...this.public(stored), clientSecret: secret, trustedHost };
  }

  /**
   * Changes a connection. `clientSecret` replaces the secret (`''` removes it); an issuer named
   * here is ruled by `author` (a tenant may keep the operator's loopback issuer, not name one).
   * @throws NotFound, ValidationError naming the field, Conflict (a domain of another connection).
   */
  async update(id: string, patch: ConnectionPatch, by: AuditContext = OPERATOR, author: IssuerAuthor = 'operator'): Promise<Connection> {
    const parsed = parseInput(patchSchema, patch, 'patch');
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const current = await this.records.getVersioned<StoredConnection>(CONNECTION, id);
      if (!current) throw new NotFound(`connection ${id}`);
      const before = current.value;
      // What the connection already has is kept, not named: a tenant's form that sends back the
      // operator's loopback issuer or domains unchanged is not refused for them (and the issuer
      // stays the operator's); only what changes is ruled by `author`.
      const issuer = parsed.issuer === undefined || parsed.issuer === before.issuer ? undefined : checkedIssuer(parsed.issuer, author);
      const domains = parsed.domains === undefined ? undefined : checkedDomains(parsed.domains, author, before.domains);
      const { sealedSecret: previousSecret, operatorIssuerHost: previousHost, ...rest } = before;
      const sealedSecret = parsed.clientSecret === undefined
        ? previousSecret
        : parsed.clientSecret === '' ? undefined : this.sealer.seal(parsed.clientSecret, secretPurpose(id));
      const operatorIssuerHost = issuer === undefined ? previousHost : author === 'operator' ? new URL(issuer).hostname : undefined;
      const next: StoredConnection = {
        ...rest,
        ...(parsed.name !== undefined ? { name: parsed.name } : {}),
        ...(issuer !== undefined ? { issuer } : {}),
        ...(parsed.clientId !== undefined ? { clientId: parsed.clientId } : {}),
        ...(parsed.tokenEndpointAuthMethod !== undefined ? { tokenEndpointAuthMethod: parsed.tokenEndpointAuthMethod } : {}),
        ...(parsed.scopes !== undefined ? { scopes: scopesOf(parsed.scopes) } : {}),
        ...(domains !== undefined ? { domains, verifiedDomains: author === 'operator' ? domains : domains.filter((domain) => before.verifiedDomains?.includes(domain)) } : {}),
        ...(parsed.claimMapping !== undefined ? { claimMapping: parsed.claimMapping } : {}),
        ...(parsed.signOutUpstream !== undefined ? { signOutUpstream: parsed.signOutUpstream } : {}),
        ...(parsed.mfaAcrValues !== undefined ? { mfaAcrValues: parsed.mfaAcrValues } : {}),
        updatedAt: new Date(this.now()).toISOString(),
        ...(sealedSecret !== undefined ? { sealedSecret } : {}),
        ...(operatorIssuerHost !== undefined ? { operatorIssuerHost } : {}),
      };
      checkSecret(next.tokenEndpointAuthMethod, next.sealedSecret !== undefined, 'patch');
      const fields = changedFields(Object.keys(parsed).filter((field) => field !== 'clientSecret'), before, next);
      if (parsed.clientSecret !== undefined) fields.push('clientSecret');
      // A domain another connection holds refuses the change before it is audited (no event of a
      // change that was not made). Then, as at creation, the record first and the claim after: a
      // connection claiming the same domain at the same time finds this one listing it and is
      // refused, or this one is (and lets the domain go again).
      const added = (domains ?? []).filter((domain) => !before.domains.includes(domain));
      await this.refuseHeld(next, added, author === 'operator');
      await this.audited('connection.updated', by, before, { fields });
      if (!(await this.records.replace(CONNECTION, id, next, current.revision))) continue;
      try {
        await this.claimDomains(next, added, by);
      } catch (error) {
        // Refused: the record back as it was (a compare-and-set on this write, which moved the
        // revision by one), or, changed again meanwhile, at least without the domains not won.
        if (!(await this.records.replace(CONNECTION, id, before, current.revision + 1))) await this.dropDomains(id, added);
        throw error;
      }
      await this.releaseDomains(id, before.domains.filter((domain) => !next.domains.includes(domain)));
      return this.public(next);
    }
    throw new Conflict(`connection ${id}`);
  }

  /** Refuses, without writing anything, a domain of `domains` another connection holds (the check claimDomains makes). */
  private async refuseHeld(connection: StoredConnection, domains: readonly string[], verifying: boolean): Promise<void> {
    for (const domain of domains) {
      const owner = await this.records.get<{ id: string }>(CONNECTION_DOMAIN, domain);
      if (!owner || owner.id === connection.id) continue;
      const holder = await this.stored(owner.id);
      // The operator's claim takes a domain another connection holds unverified (see above).
      if (verifying && holder && !holder.verifiedDomains?.includes(domain)) continue;
      if (holder?.domains.includes(domain)) {
        throw new ValidationError(`domains.${connection.domains.indexOf(domain)}`, `${domain} already belongs to another connection (a domain belongs to one organisation)`);
      }
    }
  }

  /** Takes `domains` out of a connection's record again (an update whose claim was refused), however it changed meanwhile. */
  private async dropDomains(id: string, domains: readonly string[]): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const current = await this.records.getVersioned<StoredConnection>(CONNECTION, id);
      if (!current || !current.value.domains.some((domain) => domains.includes(domain))) return;
      const kept = current.value.domains.filter((domain) => !domains.includes(domain));
      const verified = current.value.verifiedDomains?.filter((domain) => !domains.includes(domain));
      if (await this.records.replace(CONNECTION, id, { ...current.value, domains: kept, ...(verified ? { verifiedDomains: verified } : {}) }, current.revision)) return;
    }
  }

  /** Deletes a connection (its domains are free again, its remembered links gone); false when there was none. */
  async delete(id: string, by: AuditContext = OPERATOR): Promise<boolean> {
    const stored = await this.stored(id);
    if (!stored) return false;
    await this.audited('connection.deleted', by, stored, { name: stored.name });
    const deleted = await this.records.delete(CONNECTION, id);
    await this.records.delete(CONNECTION_OF_TENANT, id);
    await this.releaseDomains(id, stored.domains);
    // After the record (a link written meanwhile sees it gone and goes itself).
    await this.#links.forgetAllOf(id);
    return deleted;
  }

  private async stored(id: string): Promise<StoredConnection | undefined> {
    if (typeof id !== 'string' || id.length === 0 || id.length > 100) return undefined;
    return this.records.get<StoredConnection>(CONNECTION, id);
  }

  private async storedOf(tenant: string): Promise<StoredConnection[]> {
    const ids = await this.records.list<{ id: string }>(CONNECTION_OF_TENANT, tenant);
    const all = await Promise.all(ids.map(({ id }) => this.stored(id)));
    return all
      .filter((stored): stored is StoredConnection => stored !== undefined && stored.tenant === tenant)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Makes `connection` the owner of `domains`, each created only where none is: a domain another
   * connection owns refuses the change (a stale entry, of a connection deleted or changed since,
   * is taken over).
   */
  private async claimDomains(connection: StoredConnection, domains: readonly string[], by: AuditContext): Promise<void> {
    const claimed: string[] = [];
    try {
      for (const [index, domain] of domains.entries()) {
        const entry = { id: connection.id, tenant: connection.tenant };
        if (await this.records.create(CONNECTION_DOMAIN, domain, DOMAINS_GROUP, entry)) {
          claimed.push(domain);
          continue;
        }
        const owner = await this.records.getVersioned<{ id: string }>(CONNECTION_DOMAIN, domain);
        if (owner?.value.id === connection.id) continue;
        const holder = owner && (await this.stored(owner.value.id));
        if (holder?.domains.includes(domain) && connection.verifiedDomains?.includes(domain) && !holder.verifiedDomains?.includes(domain)) {
          // The operator vouches for this connection's claim: the other one, which holds the domain
          // unverified, lets it go (recorded in its tenant's trail), then the entry is taken over.
          await this.audited('connection.updated', by, holder, { fields: ['domains'], domain_taken: domain, reason: 'verified_elsewhere' });
          await this.dropDomains(holder.id, [domain]);
        } else if (holder?.domains.includes(domain)) {
          throw new ValidationError(`domains.${connection.domains.indexOf(domain) >= 0 ? connection.domains.indexOf(domain) : index}`, `${domain} already belongs to another connection (a domain belongs to one organisation)`);
        }
        if (owner ? !(await this.records.replace(CONNECTION_DOMAIN, domain, entry, owner.revision)) : !(await this.records.create(CONNECTION_DOMAIN, domain, DOMAINS_GROUP, entry))) {
          throw new Conflict(`the domain ${domain}`);
        }
        claimed.push(domain);
      }
    } catch (error) {
      // The domains this call took are let go again: a refused change holds none.
      await this.releaseDomains(connection.id, claimed);
      throw error;
    }
  }

  /** Frees the domains a connection no longer owns (only where it is still the owner). */
  private async releaseDomains(id: string, domains: readonly string[]): Promise<void> {
    for (const domain of domains) {
      const owner = await this.records.get<{ id: string }>(CONNECTION_DOMAIN, domain);
      if (owner?.id === id) await this.records.delete(CONNECTION_DOMAIN, domain);
    }
  }

  private async audited(type: AuditEventType, by: AuditContext, connection: { id: string; tenant: string }, details: Record<string, unknown>): Promise<void> {
    await this.audit?.record(changed(type, by, { type: 'connection', id: connection.id }, connection.tenant, details));
  }
}

function checkedIssuer(issuer: string, author: IssuerAuthor): string {
  const problem = issuerProblem(issuer, author);
  if (problem) throw new ValidationError('issuer', problem);
  return issuer;
}

/** The domains normalized, each checked (those in `kept`, the connection's already, by the operator's rule they passed), no two alike. */
function checkedDomains(domains: readonly string[], author: IssuerAuthor, kept: readonly string[] = []): string[] {
  const seen = new Set<string>();
  return domains.map((domain, index) => {
    const keeps = kept.includes(normalizeDomain(domain) ?? '');
    const problem = emailDomainProblem(domain, keeps ? 'operator' : author);
    if (problem) throw new ValidationError(`domains.${index}`, problem);
    const host = normalizeDomain(domain)!;
    if (seen.has(host)) throw new ValidationError(`domains.${index}`, `${host} is listed twice`);
    seen.add(host);
    return host;
  });
}

/** A secret is needed by the secret methods and refused with private_key_jwt (it would never be used). */
function checkSecret(method: UpstreamAuthMethod, hasSecret: boolean, root = 'connection'): void {
  if (method !== 'private_key_jwt' && !hasSecret) throw new ValidationError(root === 'patch' ? 'clientSecret' : 'clientSecret', `is required with ${method}`);
  if (method === 'private_key_jwt' && hasSecret) throw new ValidationError('clientSecret', 'is not used with private_key_jwt (remove it: `clientSecret: ""`)');
}

/** The scopes asked, `openid` first, each once. */
function scopesOf(scopes: readonly string[] | undefined): string[] {
  return [...new Set(['openid', ...(scopes ?? DEFAULT_UPSTREAM_SCOPES)])];
}

function toPublic({ sealedSecret, operatorIssuerHost: _host, verifiedDomains, ...stored }: StoredConnection, callbackBase: string | undefined): Connection {
  return {
    ...stored,
    verifiedDomains: stored.domains.filter((domain) => verifiedDomains?.includes(domain)),
    hasClientSecret: sealedSecret !== undefined,
    ...(callbackBase !== undefined ? { redirectUri: `${callbackBase}/${encodeURIComponent(stored.id)}` } : {}),
  };
}

/** Whether a connection's issuer is a loopback provider (the operator's development setup). */
export function isLoopbackIssuer(connection: Pick<Connection, 'issuer'>): boolean {
  return isLoopbackHost(new URL(connection.issuer).hostname);
}
