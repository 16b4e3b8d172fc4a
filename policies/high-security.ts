import { z } from 'zod';
import { UnauthorizedClient, ValidationError } from './errors.js';
import { AUTHORIZATION_CODE_SECONDS, HIGH_SECURITY_AUTHORIZATION_CODE_SECONDS } from './lifetimes.js';

/**
 * THE HIGH-SECURITY PROFILE (docs/high-security.md): what the FAPI 2.0 Security Profile asks of an
 * authorization server, for the clients that select it, as far as this server offers it.
 *
 * - Who: a client configuration or an app registration selects it (`profile: 'high-security'`),
 *   or its tenant does (the host's `tenantPolicy` or the tenant's own settings); a client's
 *   effective profile is high-security when its own or its tenant's is. An operator's app (no
 *   tenant) follows its own profile only.
 * - What its settings must be (checked at create and update, never changed for the client: a
 *   setting that does not conform is a ValidationError naming the field):
 *   - a confidential client: a public app has no key of its own to authenticate with;
 *   - `tokenEndpointAuthMethod: 'private_key_jwt'` (asymmetric client authentication);
 *   - `dpop: 'required'` (sender-constrained access tokens);
 *   - apps: `requirePushedAuthorizationRequests: true`, `pkceEnabled: true` (S256 is the only
 *     method), every redirect URI https (a confidential client is a server, reached over TLS).
 * - What holds at run time (src/engine/client-directory.ts, src/engine/configuration.ts), also for
 *   a client whose tenant selected the profile after it was registered (the host's policy is a
 *   function: nothing can refuse it beforehand):
 *   - authorization codes live HIGH_SECURITY_AUTHORIZATION_CODE_SECONDS (60 s) instead of 5 min;
 *   - DPoP, PAR and PKCE are demanded whatever the record says;
 *   - a client that does not authenticate with private_key_jwt is refused (`unauthorized_client`)
 *     at the token endpoint and at the authorization and pushed authorization endpoints;
 *   - a client assertion's audience must be the issuer identifier alone, as a string.
 * - A tenant's admin switching her tenant to it is refused while a client of the tenant does not
 *   conform, with the IDs of those clients (src/records/tenant-settings.ts).
 */

/** The profiles a client or a tenant can select, weakest first. */
export const SECURITY_PROFILES = ['standard', 'high-security'] as const;
/** A client's or a tenant's security profile (`standard` when none is selected). */
export type SecurityProfile = (typeof SECURITY_PROFILES)[number];
/** The profile's values (the record schemas and the management API's wire schema). */
export const SECURITY_PROFILE = z.enum(SECURITY_PROFILES);

/** The engine client metadata property that carries a client's effective profile. */
export const PROFILE_METADATA = 'security_profile';

/** What the rule reads of a client: a client configuration (`kind: 'client'`) or an app. */
export interface ProfiledClient {
  kind: 'client' | 'app';
  /** Apps only. */
  clientType?: 'public' | 'confidential' | undefined;
  /** Absent: Basic (a client configuration, a confidential app) or none (a public app). */
  tokenEndpointAuthMethod?: string | undefined;
  /** Absent: optional. */
  dpop?: 'required' | 'optional' | undefined;
  /** Apps only. */
  requirePushedAuthorizationRequests?: boolean | undefined;
  /** Apps only. */
  pkceEnabled?: boolean | undefined;
  /** Apps only. */
  redirectUris?: readonly string[] | undefined;
}

/** One setting that does not conform: the record field and why. */
export interface ProfileProblem {
  field: string;
  message: string;
}

/**
 * A tenant's profile from the host's `tenantPolicy` and the tenant's own settings: high-security
 * when either says so (the tenant's admin cannot undo the host's choice, and may ask for more).
 */
export function tenantProfile(host: { profile?: SecurityProfile | undefined }, tenant: { profile?: SecurityProfile | undefined }): SecurityProfile {
  return host.profile === 'high-security' || tenant.profile === 'high-security' ? 'high-security' : 'standard';
}

/** The effective profile: high-security when the client's own or its tenant's is. */
export function effectiveProfile(own: SecurityProfile | undefined, tenant: SecurityProfile | undefined): SecurityProfile {
  return own === 'high-security' || tenant === 'high-security' ? 'high-security' : 'standard';
}

/**
 * Every setting of `client` the high-security profile does not allow, in the order of the
 * requirements (docs/high-security.md); empty when it conforms.
 */
export function highSecurityProblems(client: ProfiledClient): ProfileProblem[] {
  const problems: ProfileProblem[] = [];
  const app = client.kind === 'app';
  if (app && client.clientType !== 'confidential') {
    // A public app cannot authenticate with a key of its own: the profile needs confidential clients.
    problems.push({ field: 'clientType', message: 'the high-security profile requires a confidential app (a public app has no key to authenticate with)' });
  } else if (client.tokenEndpointAuthMethod !== 'private_key_jwt') {
    problems.push({ field: 'tokenEndpointAuthMethod', message: 'the high-security profile requires private_key_jwt' });
  }
  if (client.dpop !== 'required') {
    problems.push({ field: 'dpop', message: "the high-security profile requires dpop: 'required' (sender-constrained tokens)" });
  }
  if (app) {
    if (client.requirePushedAuthorizationRequests !== true) {
      problems.push({ field: 'requirePushedAuthorizationRequests', message: 'the high-security profile requires pushed authorization requests' });
    }
    if (client.pkceEnabled === false) {
      problems.push({ field: 'pkceEnabled', message: 'the high-security profile requires PKCE (S256)' });
    }
    const index = (client.redirectUris ?? []).findIndex((uri) => !/^https:\/\//i.test(uri));
    if (index >= 0) {
      problems.push({ field: `redirectUris.${index}`, message: 'the high-security profile requires https redirect URIs' });
    }
  }
  return problems;
}

/**
 * Create and update time: a client whose effective profile is high-security must conform.
 * @param tenantProfile the profile its tenant selected (absent: none); named in the error when it
 *   is the tenant's choice that asks for it.
 * @throws ValidationError naming the first setting that does not conform.
 */
export function checkProfile(client: ProfiledClient, own: SecurityProfile | undefined, tenantProfile?: SecurityProfile): void {
  if (effectiveProfile(own, tenantProfile) !== 'high-security') return;
  const [problem] = highSecurityProblems(client);
  if (!problem) return;
  const why = own === 'high-security' ? '' : " (the client's tenant selected it)";
  throw new ValidationError(problem.field, `${problem.message}${why}`);
}

/** Whether an engine client's effective profile (PROFILE_METADATA) is high-security. */
export function isHighSecurity(client: object | undefined): boolean {
  return (client as Record<string, unknown> | undefined)?.[PROFILE_METADATA] === 'high-security';
}

/** An authorization code's lifetime for an engine client: 60 s under the high-security profile, else 5 min. */
export function authorizationCodeSeconds(client: object | undefined): number {
  return isHighSecurity(client) ? HIGH_SECURITY_AUTHORIZATION_CODE_SECONDS : AUTHORIZATION_CODE_SECONDS;
}

/**
 * Run time: an engine client under the high-security profile that does not authenticate with
 * private_key_jwt (its tenant selected the profile after it was registered) is refused.
 * @throws UnauthorizedClient saying what the profile needs.
 */
export function refuseNonConforming(client: { clientAuthMethod?: string } | undefined): void {
  if (!client || !isHighSecurity(client) || client.clientAuthMethod === 'private_key_jwt') return;
  throw new UnauthorizedClient(`the high-security profile requires private_key_jwt; this client authenticates with ${client.clientAuthMethod ?? 'none'}`);
}

/**
 * Run time: a client assertion of a high-security client names the issuer identifier alone, as a
 * string, as its audience (not the token endpoint URL, not an array).
 * @returns whether `aud` is acceptable for `client`.
 */
export function assertionAudienceAllowed(client: object | undefined, aud: unknown, issuer: string): boolean {
  return !isHighSecurity(client) || aud === issuer;
}
