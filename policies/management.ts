/**
 * THE MANAGEMENT RIGHT.
 *
 * The management API (client configurations, app registrations) accepts only access tokens that
 * carry the scope `manage.integrations`. Every API of the platform shares one audience, so without
 * a right of its own any first-party token seen by any API, log or script could mint permanent
 * machine credentials. A token gets the scope only when all of these hold:
 *
 * - the app asked for it explicitly in the authorization request (`scope=... manage.integrations`);
 * - the app is first-party (the platform's own UI, the portal): a third-party app asking for it is
 *   refused at /authorize with `invalid_scope`;
 * - the user holds the permission "Create and update integration setup" (`integration_setup`) at
 *   the time the token is issued (a code exchange or a refresh): a user without it gets a token
 *   without the scope;
 * - and the user allowed it on the consent page, like any other scope.
 *
 * A token carrying it lives `managementAccessTokenTtl` seconds (300 by default) whatever the tenant's
 * named-user lifetime is. Machine clients can never be assigned it.
 */

/** The scope of the management right. */
export const MANAGEMENT_SCOPE = 'manage.integrations';

/** What the consent page and the consent API say the scope allows. */
export const MANAGEMENT_SCOPE_WORDS = "Create and update your organization's integrations (client configurations and app registrations)";

/** The platform permission a user must hold for the scope: "Create and update integration setup". */
export const INTEGRATION_SETUP = 'integration_setup';

/** Whether an account's permissions allow the management right. */
export function holdsIntegrationSetup(permissions: readonly string[] | undefined): boolean {
  return permissions?.includes(INTEGRATION_SETUP) === true;
}

/** Authorization requests: only a first-party app may ask for the management right. */
export function mayRequestManagement(firstParty: boolean): boolean {
  return firstParty;
}
