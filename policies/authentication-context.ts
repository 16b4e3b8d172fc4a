/**
 * HOW A USER SIGNED IN, as tokens say it: the methods of a sign-in (`amr`), the class they reach
 * (`acr`), and whether a request's `acr_values` are met by a sign-in.
 *
 * - Methods are RFC 8176 values: `pwd` (the password), `otp` (an authenticator app's code), `hwk`
 *   and `swk` (a passkey held in hardware, or in software). The sign-in step hands the methods it
 *   used, in order; `amr` lists each once and adds `mfa` when two or more of them were used (RFC
 *   8176 §2: more than one factor). A step may also hand `mfa` itself (a method that is two factors
 *   at once).
 * - Two classes, in our own namespace: `urn:talent-auth:acr:pwd` (a password, or one factor) and
 *   `urn:talent-auth:acr:mfa` (a second factor too: `amr` holds `mfa`). Not the `phr`/`phrh`
 *   names: those promise phishing resistance, which an authenticator app's code does not give.
 *   The mfa class is the higher one: it meets a request for either.
 * - A request's `acr_values` are voluntary in OpenID Connect; we treat the ones we know as what the
 *   app needs: among the known values it names, the lowest is the least it accepts, and a sign-in
 *   of that class or above meets it. Values we do not know are ignored (the app learns the class
 *   it got from the ID token's `acr`); a request naming none of ours asks for nothing.
 */

/**
 * An RFC 8176 method a sign-in step used, or `fed`: a sign-in through a tenant's identity provider
 * (src/federation/). `fed` is not a factor itself; the provider's own methods, where it names
 * registered ones, come with it (policies/upstream-sign-in.ts).
 */
export type AuthenticationMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'mfa' | 'fed' | RegisteredMethod;

/** The method values RFC 8176 §2 registers (what a provider's `amr` may pass on to ours). */
export const REGISTERED_METHODS = [
  'face', 'fpt', 'geo', 'hwk', 'iris', 'kba', 'mca', 'mfa', 'otp', 'pin', 'pwd', 'rba', 'retina', 'sc', 'sms', 'swk', 'tel', 'user', 'vbm', 'wia',
] as const;

/** A method value RFC 8176 registers. */
export type RegisteredMethod = (typeof REGISTERED_METHODS)[number];

/** A password (or any one factor). */
export const ACR_PASSWORD = 'urn:talent-auth:acr:pwd';
/** A second factor after the first (`amr` holds `mfa`). */
export const ACR_MFA = 'urn:talent-auth:acr:mfa';

/** The classes we sign users in at, lowest first (discovery's `acr_values_supported`). */
export const ACR_VALUES: readonly string[] = [ACR_PASSWORD, ACR_MFA];

/** What a sign-in hands the engine: its methods (`amr`) and its class (`acr`). */
export interface SignInSignals {
  amr: string[];
  acr: string;
}

/** The factors that count towards `mfa` (`mfa` itself is not one). */
const FACTORS: ReadonlySet<string> = new Set(['pwd', 'otp', 'hwk', 'swk']);

/**
 * The `amr` and `acr` of a sign-in that used `methods`.
 * @throws TypeError when no method was used (a sign-in without one is a bug of the caller).
 */
export function signInSignals(methods: readonly AuthenticationMethod[]): SignInSignals {
  if (methods.length === 0) throw new TypeError('a sign-in uses at least one method');
  const amr = [...new Set(methods)];
  const factors = amr.filter((method) => FACTORS.has(method));
  if (factors.length >= 2 && !amr.includes('mfa')) amr.push('mfa');
  return { amr, acr: amr.includes('mfa') ? ACR_MFA : ACR_PASSWORD };
}

/** The rank of a class (higher is stronger), or -1 for one we do not know. */
function rankOf(acr: string | undefined): number {
  return acr === undefined ? -1 : ACR_VALUES.indexOf(acr);
}

/**
 * The least class a request's `acr_values` accept (the lowest of ours it names), or undefined when
 * it names none of ours (then any sign-in meets it).
 */
export function requiredAcr(acrValues: unknown): string | undefined {
  if (typeof acrValues !== 'string') return undefined;
  const ranks = acrValues.split(' ').map(rankOf).filter((rank) => rank >= 0);
  return ranks.length ? ACR_VALUES[Math.min(...ranks)] : undefined;
}

/** Whether a sign-in of class `acr` meets the request's `acr_values`. */
export function meetsAcrValues(acr: string | undefined, acrValues: unknown): boolean {
  const required = requiredAcr(acrValues);
  return required === undefined || rankOf(acr) >= rankOf(required);
}
