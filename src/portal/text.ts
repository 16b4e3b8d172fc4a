/**
 * Every text of the portal's pages, in one place (English; the pages take the object, so a
 * language is one more object of this shape).
 */
export const PORTAL_TEXT = {
  product: 'Developer portal',
  intro: "Manage your organisation's client configurations and app registrations, and the apps you allowed to access your account.",
  signIn: 'Sign in',
  signOut: 'Sign out',
  signedOut: 'You are signed out of the portal.',
  signInEnded: 'Your sign-in has ended. Please sign in again.',
  signInUnknown: 'That sign-in is unknown or has expired. Please sign in again.',
  signInDenied: 'You did not allow the portal to access your account.',
  signInFailed: 'The sign-in failed. Please try again.',
  signedInAs: (name: string, sub: string, tenant?: string) => `Signed in as ${name} (${sub})${tenant ? `, organisation ${tenant}` : ''}.`,
  permission: "You need the permission 'Create and update integration setup' to see and change your organisation's "
    + 'client configurations and app registrations. Ask an administrator of your organisation for it.',
  loadFailed: 'The integration setup could not be loaded. Please try again.',
  back: 'Back to the portal',
  cancel: 'Cancel',
  edit: 'Edit',
  delete: 'Delete',
  regenerate: 'Regenerate secret',
  actions: 'Actions',
  clientId: 'Client ID',
  name: 'Name',
  description: 'Description',
  optional: '(optional)',
  required: {
    name: 'Name: enter a name.',
    category: 'Category: enter a category.',
    scopes: 'APIs and scopes: choose at least one scope.',
    redirectUri: 'Redirect URIs: enter at least one.',
  },
  fixErrors: (count: number) => (count === 1 ? 'There is 1 problem with this form:' : `There are ${count} problems with this form:`),
  clients: {
    heading: 'Client configurations',
    lead: 'Machine-to-machine integrations: they get tokens with their client ID and secret.',
    none: 'No client configurations yet.',
    create: 'Create a client configuration',
    editHeading: (name: string) => `Edit client configuration: ${name}`,
    save: 'Save changes',
    category: 'Category',
    categoryHint: 'What kind of integration this is, e.g. payroll or recruiting.',
    apis: 'APIs and scopes',
    apisHint: 'Choose at least one scope; an API with no scope chosen is not included.',
    constraint: (dimension: string) => `Only ${dimension} values`,
    constraintHint: 'Comma-separated. Empty: every value.',
    scopesColumn: 'APIs and scopes',
    created: (name: string) => `Client configuration "${name}" created.`,
    saved: (name: string) => `Client configuration "${name}" saved.`,
    deleted: (name: string) => `Client configuration "${name}" deleted.`,
    deleteHeading: (name: string) => `Delete client configuration "${name}"?`,
    deleteWarning: 'Its secret stops working at once and it gets no more tokens. Tokens it already has work until they expire (at most an hour). This cannot be undone.',
  },
  apps: {
    heading: 'App registrations',
    lead: 'Apps that users sign in to: they act on behalf of a user who allowed them.',
    none: 'No app registrations yet.',
    create: 'Create an app registration',
    editHeading: (name: string) => `Edit app registration: ${name}`,
    save: 'Save changes',
    redirectUri: (n: number) => `Redirect URI ${n}`,
    redirectUris: 'Redirect URIs',
    redirectHint: "https, http on localhost, or an app's own scheme (myapp://callback); matched exactly. Leave a field empty to remove it.",
    addRedirectUri: 'Add another redirect URI',
    postLogoutUri: (n: number) => `Post-logout redirect URI ${n}`,
    postLogoutUris: 'Post-logout redirect URIs (optional)',
    postLogoutHint: 'Where the app may send users after they sign out; the same rules, matched exactly.',
    addPostLogoutUri: 'Add another post-logout redirect URI',
    backchannel: 'Back-channel logout URI (optional)',
    backchannelHint: "The app's server endpoint that is told when its user signs out: https with a public host name.",
    type: 'Client type',
    typeColumn: 'Type',
    confidential: 'Confidential: a server-side app that keeps a secret',
    public: 'Public: a single-page or mobile app, without a secret',
    typeChangeWarning: 'Changing the type signs every user out of this app: their sign-ins and consents end and they are asked to allow it again. '
      + 'Confidential to public deletes the secret; public to confidential creates one, shown once.',
    pkce: 'Require PKCE',
    pkceHint: 'Public apps always use PKCE. Turn it off only for a legacy confidential app that cannot send a code verifier; '
      + 'its redirect URIs must then all be https.',
    noSecret: 'no secret',
    created: (name: string) => `App registration "${name}" created.`,
    createdPublic: (name: string) => `App registration "${name}" created (public: it has no secret).`,
    saved: (name: string) => `App registration "${name}" saved.`,
    deleted: (name: string) => `App registration "${name}" deleted.`,
    deleteHeading: (name: string) => `Delete app registration "${name}"?`,
    deleteWarning: 'Its users are signed out of it at once: their sign-ins and consents end, and its secret stops working. This cannot be undone.',
  },
  secret: {
    title: 'Client secret',
    createdHeading: (name: string) => `Created: ${name}`,
    newHeading: (name: string) => `New secret: ${name}`,
    created: (what: string) => `The ${what} was created.`,
    regenerated: (what: string) => `The ${what}'s previous secret no longer works.`,
    label: 'Client secret',
    copy: 'Copy secret',
    copied: 'Copied.',
    copyFailed: 'Copy failed: select the secret and copy it.',
    once: 'This secret is shown once.',
    onceMore: 'Store it somewhere safe now: it cannot be shown again. If it is lost, regenerate it.',
    regenerateHeading: (name: string) => `Regenerate the secret of "${name}"?`,
    regenerateWarning: 'The current secret stops working at once: whatever uses it fails until it is given the new one.',
    what: { client_configuration: 'client configuration', app_registration: 'app registration' },
  },
  consents: {
    heading: 'My consents',
    lead: 'The apps you allowed to access your account. Revoking one signs that app out; it asks you again next time.',
    none: 'You have not allowed any app to access your account.',
    loadFailed: 'Your consents could not be loaded.',
    app: 'App',
    may: 'May',
    since: 'Since',
    revoke: 'Revoke',
    revokeLabel: (name: string) => `Revoke the consent of ${name}`,
    deletedApp: 'A deleted app',
    revoked: (name: string) => `Consent of ${name} revoked: it can no longer refresh its access to your account.`,
    revokedPortal: (name: string) => `You revoked the consent of ${name}, so you are signed out of the portal.`,
  },
  activity: {
    actors: { user: 'user', operator: 'operator', client: 'client', anonymous: 'anonymous' } as Record<string, string>,
    heading: 'Activity',
    lead: 'The latest changes and refusals in your organisation: who did what, to which integration, from where.',
    none: 'Nothing recorded yet.',
    all: 'All activity',
    when: 'When',
    what: 'What',
    who: 'Who',
    target: 'Target',
    from: 'From',
    type: 'Event type',
    anyType: 'Any',
    filter: 'Show',
    older: 'Older events',
    newest: 'Newest events',
  },
  errors: {
    refused: 'Your portal session has expired or the request did not come from its page.',
    tooLarge: 'The form was too large.',
    notFound: 'Not found.',
    gone: 'It no longer exists.',
    failed: 'The portal could not complete the request.',
    unavailable: 'The service is temporarily unavailable. Please try again shortly.',
    notAllowed: 'Method not allowed.',
  },
};

/** The shape of the portal's texts. */
export type PortalText = typeof PORTAL_TEXT;

/** A host's texts of one language: any text, or any text of a group (`portal.messages`). */
export type PortalTextOverrides = { [K in keyof PortalText]?: PortalText[K] extends (...args: never[]) => unknown ? PortalText[K] : PortalText[K] extends object ? Partial<PortalText[K]> : PortalText[K] };

/** A language's texts: ours, then the host's over them (groups merged one level down). */
export function withOverrides(base: PortalText, overrides: PortalTextOverrides | undefined): PortalText {
  if (!overrides) return base;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    const ours = merged[key];
    merged[key] = typeof ours === 'object' && ours !== null && typeof value === 'object' ? { ...ours, ...value } : value;
  }
  return merged as PortalText;
}
