import type { AuditContext, AuditEvent, AuditEventType, AuditTarget } from './trail.js';

/*
 * THE AUDIT EVENTS, BUILT IN ONE PLACE: every event the server writes is made here, from fixed
 * fields (never from a request's body), so that what an event says, and what it never says (a
 * secret, a token, a username typed into a form), is read in one file. The callers hand what
 * happened; AuditTrail (trail.ts) writes it.
 */

/** An event before it is written (the trail gives it its id and time). */
export type NewAuditEvent = Omit<AuditEvent, 'id' | 'time'>;

const tenantOf = (tenant: string | undefined) => (tenant !== undefined ? { tenant } : {});
const addressOf = (address: string | undefined) => (address ? { address } : {});

/** A change of a tenant's setup (a client, an app, a consent), by whoever acts (`by`). */
export function changed(
  type: AuditEventType,
  by: AuditContext,
  target: AuditTarget,
  tenant: string | undefined,
  details?: Record<string, unknown>,
): NewAuditEvent {
  return { type, ...tenantOf(tenant), actor: by.actor, target, ...addressOf(by.address), ...(details ? { details } : {}) };
}

/** A consent given or revoked: in the user's tenant, the app its target, the user in the details. */
export function consentChanged(
  type: 'consent.granted' | 'consent.revoked',
  by: AuditContext,
  consent: { tenant: string; sub: string; clientId: string },
  details: Record<string, unknown>,
): NewAuditEvent {
  return changed(type, by, { type: 'app_registration', id: consent.clientId }, consent.tenant, { user: consent.sub, ...details });
}

/** A sign-in hold lifted: the user when known, else the username's hint (never the username). */
export function signInUnlocked(by: AuditContext, tenant: string | undefined, user: { sub: string } | undefined, failures: number, hint: string): NewAuditEvent {
  const target: AuditTarget | undefined = user ? { type: 'user', id: user.sub } : undefined;
  return {
    type: 'sign_in.unlocked',
    ...tenantOf(tenant),
    actor: by.actor,
    ...(target ? { target } : {}),
    ...addressOf(by.address),
    details: { failures, ...(user ? {} : { user_hint: hint }) },
  };
}

/** A signing key added, promoted or retired (the CLI, as the operator). */
export function signingKeyChanged(type: 'signing_key.added' | 'signing_key.promoted' | 'signing_key.retired', by: AuditContext, kid: string, alg?: string): NewAuditEvent {
  return { type, actor: by.actor, target: { type: 'signing_key', id: kid }, ...(alg ? { details: { alg } } : {}) };
}

/** A user signed in to an app. */
export function signInSucceeded(user: { sub: string; tenant: string }, clientId: string, address: string): NewAuditEvent {
  return { type: 'sign_in.succeeded', tenant: user.tenant, actor: { type: 'user', id: user.sub }, target: { type: 'app_registration', id: clientId }, address };
}

/**
 * A sign-in refused at an app (a wrong password, throttled, or a password where SSO is required):
 * in the trail of the app's tenant (the platform's for its own apps; an SSO refusal at a platform
 * app: the user's tenant's), anonymous: never the username, which may be a password typed
 * by mistake, or name nobody.
 */
export function signInFailed(app: { clientId: string; tenant?: string | undefined }, address: string, reason: 'throttled' | 'wrong_credentials' | 'sso_required'): NewAuditEvent {
  return {
    type: 'sign_in.failed',
    ...tenantOf(app.tenant),
    actor: { type: 'anonymous' },
    target: { type: 'app_registration', id: app.clientId },
    address,
    details: { reason },
  };
}

/** A sign-out: the session ended, with its user (in her tenant) when there was one. */
export function sessionEnded(user: { sub: string; tenant?: string | undefined } | undefined, clientId: string | undefined, address: string): NewAuditEvent {
  return {
    type: 'session.ended',
    ...tenantOf(user?.tenant),
    actor: user ? { type: 'user', id: user.sub } : { type: 'anonymous' },
    ...(clientId ? { target: { type: 'app_registration', id: clientId } } : {}),
    address,
  };
}

/** A rotated refresh token presented again: a retry served, or a reuse (its grant ended), in its user's tenant. */
export function refreshTokenPresentedAgain(
  type: 'refresh_token.reuse_detected' | 'refresh_token.retried',
  token: { clientId?: string | undefined; accountId?: string | undefined },
  tenant: string | undefined,
  address: string | undefined,
): NewAuditEvent {
  return {
    type,
    ...tenantOf(tenant),
    actor: { type: 'client', ...(token.clientId ? { id: token.clientId } : {}) },
    ...(token.clientId ? { target: { type: 'app_registration', id: token.clientId } } : {}),
    ...addressOf(address),
    details: { user: token.accountId, ...(type === 'refresh_token.retried' ? { retry: 1 } : { grant_ended: true }) },
  };
}

/** Failed client authentications past their limit, in the tenant of the client they name, if any. */
export function clientAuthRateLimited(client: { clientId: string; tenant?: string | undefined; machine: boolean } | undefined, address: string): NewAuditEvent {
  return {
    type: 'client_auth.rate_limited',
    ...tenantOf(client?.tenant),
    actor: client ? { type: 'client', id: client.clientId } : { type: 'anonymous' },
    ...(client ? { target: { type: client.machine ? 'client_configuration' : 'app_registration', id: client.clientId } } : {}),
    address,
  };
}

/** A refusal of the management API (401, 403, or a 404 for a record that is not the caller's). */
export function managementDenied(
  caller: { sub: string; tenant: string } | undefined,
  route: string,
  request: { method: string; address: string },
  refusal: { status: number; error: string },
): NewAuditEvent {
  return {
    type: 'management.denied',
    ...tenantOf(caller?.tenant),
    actor: caller ? { type: 'user', id: caller.sub } : { type: 'anonymous' },
    target: { type: 'management_api', id: route },
    address: request.address,
    details: { method: request.method, status: refusal.status, error: refusal.error },
  };
}

/** Which factor an event is about (`host`: one the host keeps itself, `accounts.secondFactor`). */
export type FactorKind = 'authenticator_app' | 'recovery_codes' | 'passkey' | 'host';

/**
 * A factor added or removed, or all of a user's factors reset: the user her target, by whoever acts
 * (she herself, an admin, the operator). Never the secret, a code or a credential's key.
 */
export function factorChanged(
  type: 'factor.added' | 'factor.removed' | 'factor.reset',
  by: AuditContext,
  user: { tenant: string; sub: string },
  details: { factor?: FactorKind; replaced?: boolean; removed?: FactorKind[]; requested?: boolean },
): NewAuditEvent {
  return changed(type, by, { type: 'user', id: user.sub }, user.tenant, details);
}

/** A user signed out everywhere by the host ("the user left"): she is the target, in her tenant. */
export function userSignedOut(by: AuditContext, user: { tenant: string; sub: string }): NewAuditEvent {
  return changed('user.signed_out', by, { type: 'user', id: user.sub }, user.tenant);
}

/** A recovery code used by the user (how many she has left). */
export function recoveryCodeUsed(user: { tenant: string; sub: string }, remaining: number): NewAuditEvent {
  return { type: 'recovery_code.used', tenant: user.tenant, actor: { type: 'user', id: user.sub }, target: { type: 'user', id: user.sub }, details: { remaining } };
}

/**
 * A second factor refused after the password (a wrong, replayed or malformed code): the user, the
 * factor and why; never what was typed.
 */
export function secondFactorFailed(
  user: { tenant: string; sub: string },
  factor: FactorKind,
  reason: 'malformed' | 'wrong' | 'replayed' | 'not_enrolled' | 'cloned_authenticator',
): NewAuditEvent {
  return { type: 'sign_in.second_factor_failed', tenant: user.tenant, actor: { type: 'user', id: user.sub }, target: { type: 'user', id: user.sub }, details: { factor, reason } };
}
