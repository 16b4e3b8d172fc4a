import { REGISTERED_METHODS, type AuthenticationMethod, type RegisteredMethod } from './authentication-context.js';

/*
 * HOW A SIGN-IN THROUGH A TENANT'S IDENTITY PROVIDER COUNTS (src/federation/, the sign-in's
 * callback):
 *
 * - Its methods are `fed`, then those of the provider's `amr` that RFC 8176 registers (anything
 *   else it says is dropped: our `amr` speaks the registered language only), then `mfa` when the
 *   provider's `amr` holds `mfa` or its `acr` is one the connection lists as multi-factor
 *   (`mfaAcrValues`). `fed` is not a factor: two factors the provider names (`pwd`, `otp`) make
 *   `mfa` as ours do (policies/authentication-context.ts).
 * - A sign-in with `mfa` (strong) meets the tenant's second-factor rule; one without (weak) goes on
 *   to our second factor. Then the provider's sign-in is the first factor: our second one makes it
 *   `mfa` whatever the provider named (it vouched for her, which is a factor, though not one we
 *   can name).
 */

const REGISTERED: ReadonlySet<string> = new Set(REGISTERED_METHODS);

/** The methods of a sign-in through a provider that said `amr` and `acr` (see above). */
export function upstreamMethods(claims: { amr?: unknown; acr?: unknown }, mfaAcrValues: readonly string[]): AuthenticationMethod[] {
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((value): value is RegisteredMethod => typeof value === 'string' && REGISTERED.has(value)) : [];
  const methods: AuthenticationMethod[] = ['fed', ...new Set(amr)];
  const strongAcr = typeof claims.acr === 'string' && mfaAcrValues.includes(claims.acr);
  if (strongAcr && !methods.includes('mfa')) methods.push('mfa');
  return methods;
}

/**
 * The methods of a sign-in finished by one of our steps (`methods`, e.g. `pwd` and `otp`) whose
 * first factor was `first` (a provider's sign-in; undefined: the password, as `methods` says).
 * With a provider first, the password of `methods` is replaced by it, and a factor of ours after
 * it makes `mfa` (see above).
 */
export function afterFirstFactor(first: readonly AuthenticationMethod[] | undefined, methods: readonly AuthenticationMethod[]): AuthenticationMethod[] {
  if (!first) return [...methods];
  const rest = methods.filter((method) => method !== 'pwd');
  const combined = [...new Set<AuthenticationMethod>([...first, ...rest])];
  if (rest.some((method) => method !== 'mfa') && !combined.includes('mfa')) combined.push('mfa');
  return combined;
}

/** Whether `value` is a list of methods as kept in a pending sign-in (our own and the registered ones). */
export function isMethodList(value: unknown): value is AuthenticationMethod[] {
  return Array.isArray(value) && value.length > 0 && value.length <= REGISTERED_METHODS.length + 1
    && value.every((method) => method === 'fed' || (typeof method === 'string' && REGISTERED.has(method)));
}
