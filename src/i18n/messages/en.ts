import { MANAGEMENT_SCOPE_WORDS } from '../../../policies/management.js';

/**
 * Every text a person reads on our pages (sign-in, consent, sign-out, error pages), in English.
 * English is complete by definition: a language the host adds with only some texts gets the rest
 * from here. Functions take what a sentence names (an app, a number) as plain text; pages escape
 * the result, so a text can never carry markup.
 */
export interface Messages {
  // --- The sign-in page
  /** Title and heading of the sign-in page. */
  signInTitle: string;
  /** Title and heading of the sign-in page when the host names its product (branding). */
  signInToProduct: (product: string) => string;
  /** Under the heading: the app being signed in to. */
  signInContinueTo: (app: string) => string;
  usernameLabel: string;
  passwordLabel: string;
  signInButton: string;
  wrongCredentials: string;
  /** Too many failed sign-ins; `seconds` to wait. */
  tooManyFailedSignIns: (seconds: number) => string;

  // --- Enterprise sign-in (through the organisation's own identity provider)
  /** The heading of the login page's section for it. */
  federationHeading: string;
  /** The label of its email field. */
  workEmailLabel: string;
  /** The button of one connection: "Continue with <name>". */
  continueWith: (connection: string) => string;
  /** An address no applicable connection owns (never says which tenant owns it). */
  federationUsePassword: string;
  /** The heading of the page of a failed sign-in through a provider. */
  federationFailedHeading: string;
  /** Its link back to the sign-in. */
  federationBackToSignIn: string;
  federationUnreachable: string;
  federationTimeout: string;
  federationMisconfigured: string;
  federationRefusedByProvider: string;
  federationCancelled: string;
  federationInvalidAnswer: string;
  federationNotThisBrowser: string;
  federationExpired: string;
  federationDomainNotAccepted: string;
  federationNotForThisApp: string;
  federationNoAccount: string;
  federationConnectionGone: string;

  // --- The second-factor page (after the password, for a user with a second factor)
  /** Title and heading of the second-factor page. */
  secondFactorTitle: string;
  /** What to type in the one field: the authenticator app's code or a recovery code. */
  secondFactorIntro: string;
  /** The label of the one code field. */
  secondFactorCodeLabel: string;
  verifyButton: string;
  /** A wrong code (or one used already: not told apart, see src/endpoints/sign-in/pages.ts). */
  wrongSecondFactorCode: string;
  /** Neither six digits nor a recovery code (not counted as a guess). */
  malformedSecondFactorCode: string;

  // --- Passkeys at sign-in (src/endpoints/sign-in/passkey-steps.ts)
  /** The button of a passkey as the second factor (the contract's words in English). */
  usePasskeyButton: string;
  /** Above that button, under the code field. */
  passkeyInstead: string;
  /** Above that button when the user has no code to type (a passkey is her only second factor). */
  passkeySecondFactorIntro: string;
  /** The button of a passkey alone on the login page. */
  signInWithPasskeyButton: string;
  /** Above that button. */
  passkeySignInIntro: string;
  /** Said by the passkey script when the browser or the user did not use the passkey. */
  passkeyNotUsed: string;
  /** The server refused the passkey (not hers, not ours, a copy, or the ceremony was over). */
  passkeyRefused: string;
  /** The tenant does not allow a passkey alone (403). */
  passkeyOnlyNotAllowed: string;

  // --- SSO required (the tenant signs its users in through its identity provider)
  // (Its title and heading: federationHeading; its buttons: continueWith; its link back: federationBackToSignIn.)
  /** Names the organisation's identity provider(s). */
  ssoRequiredIntro: (provider: string) => string;
  /** Why there is no password field. */
  ssoRequiredNoPassword: string;

  // --- The consent page
  consentTitle: string;
  consentHeading: (app: string) => string;
  /** Who registered the app: a tenant's name or `consentThePlatform`. */
  consentRegisteredBy: (owner: string) => string;
  consentThePlatform: string;
  consentAsks: string;
  /**
   * No longer shown: the consent page lists only the scopes the user can give. Kept so that a
   * host's texts that set it stay valid.
   * @deprecated
   */
  consentNotAvailable: string;
  allowButton: string;
  denyButton: string;

  // --- Enrolment after the password (a user who must have a second factor and has none, or whose
  // factors an admin asked to reset): the authenticator app, then the recovery codes, shown once
  /** Title and heading of the enrolment page. */
  enrolTitle: string;
  /** Why she is asked (her organization asks for a second step) and what to do. */
  enrolIntro: string;
  /** Why she is asked when an admin reset her factors (her old ones stop working when she is done). */
  enrolResetIntro: string;
  /** The QR code's accessible name. */
  enrolQrLabel: string;
  /** The heading of the secret in text, for typing into the app. */
  enrolSecretLabel: string;
  /** The field of the app's first code. */
  enrolCodeLabel: string;
  enrolButton: string;
  /** The enrolment ran out of time: a new QR code is shown. */
  enrolExpired: string;
  /** A wrong first code. */
  enrolWrongCode: string;
  /** The enrolment's code is not six digits. */
  enrolMalformedCode: string;
  /** Title and heading of the recovery codes page. */
  recoveryCodesTitle: string;
  /** What the codes are for, and that they are shown this once. */
  recoveryCodesIntro: string;
  /** The page shown again (reloaded): the codes are not shown twice. */
  recoveryCodesShownOnce: string;

  // --- What scopes allow (OIDC scopes and the management right; API scopes come from the catalog)
  scopeOpenid: string;
  scopeProfile: string;
  scopeEmail: string;
  scopeOfflineAccess: string;
  /** The name the management right is listed under. */
  scopeManagementApi: string;
  scopeManagement: string;

  // --- The sign-out pages
  signOutTitle: string;
  signOutHeading: string;
  signOutAppAsks: (app: string) => string;
  signOutQuestion: string;
  signOutPasswordNextTime: string;
  signOutButton: string;
  notSignedInTitle: string;
  notSignedInHeading: string;
  notSignedInBackTo: (app: string) => string;
  notSignedInBack: string;
  notSignedInNothingToEnd: string;
  continueButton: string;
  signedOutTitle: string;
  signedOutHeading: string;
  signedOutOfApp: (app: string) => string;
  signedOutOfService: string;
  signedOutClose: string;
  /** The way back from the organisation's sign-out was forged, altered or is too old. */
  upstreamSignOutReturnInvalid: string;

  // --- Error pages
  errorTitle: string;
  errorHeading: string;
  /** Under an error the app caused (the error code and its technical description follow). */
  errorReturnToApp: string;
  /** Label of the technical details (the error code and description, in English). */
  errorDetails: string;
  waitHeading: string;
  tooManyRequests: (seconds: number) => string;
  requestTooLarge: (bytes: number) => string;
  requestNotAForm: string;
  serviceUnavailable: string;
  requestFailed: string;
  methodNotAllowed: string;
  formFromOtherSite: string;
  formExpired: string;
  formTooLarge: string;
  formEncoding: string;
  signInExpired: string;
  signInOtherBrowser: string;
  signInStepOver: string;
  signInPageMissing: string;
  appNotRegistered: string;
  sessionEnded: string;
  chooseAllowOrDeny: string;
}

/** "N seconds" or "N minutes". */
function wait(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/** The English texts (the default language, and the fallback of every other). */
export const en: Messages = {
  signInTitle: 'Sign in',
  signInToProduct: (product) => `Sign in to ${product}`,
  signInContinueTo: (app) => `to continue to ${app}`,
  usernameLabel: 'Username',
  passwordLabel: 'Password',
  signInButton: 'Sign in',
  wrongCredentials: 'Wrong username or password.',
  tooManyFailedSignIns: (seconds) => `Too many failed sign-ins. For your security, try again in ${wait(seconds)}.`,
  federationHeading: 'Sign in through your organisation',
  workEmailLabel: 'Work email',
  continueWith: (connection) => `Continue with ${connection}`,
  federationUsePassword: 'There is no organisation sign-in for this address. Sign in with your username and password.',
  federationFailedHeading: 'Sign-in through your organisation failed',
  federationBackToSignIn: 'Back to the sign-in',
  federationUnreachable: "Your organisation's sign-in service could not be reached. Try again in a moment, or sign in with your password.",
  federationTimeout: "Your organisation's sign-in service did not answer in time. Try again in a moment.",
  federationMisconfigured: "Your organisation's sign-in service is not set up correctly for this sign-in. Ask your administrator.",
  federationRefusedByProvider: "Your organisation's sign-in service refused the sign-in. Try again, or ask your administrator.",
  federationCancelled: "The sign-in was cancelled at your organisation's sign-in service. Try again if you want to sign in.",
  federationInvalidAnswer: "The answer of your organisation's sign-in service could not be verified. Try again; if it happens again, tell your administrator.",
  federationNotThisBrowser: 'This sign-in was started in another browser or tab, or was already used. Start again from the sign-in.',
  federationExpired: 'The sign-in at your organisation took too long. Start again from the sign-in.',
  federationDomainNotAccepted: "The email address of your organisation's account is not one this sign-in accepts. Ask your administrator.",
  federationNotForThisApp: "This organisation's sign-in cannot be used for this application.",
  federationNoAccount: 'There is no account here for the identity your organisation confirmed. Ask your administrator.',
  federationConnectionGone: "This organisation's sign-in is no longer set up. Sign in with your password, or ask your administrator.",

  secondFactorTitle: 'Two-step verification',
  secondFactorIntro: 'Enter the 6-digit code your authenticator app shows for this account, or one of your recovery codes.',
  secondFactorCodeLabel: 'Verification code',
  verifyButton: 'Verify',
  wrongSecondFactorCode: 'That code is not right. Enter the code your app shows now, or a recovery code.',
  malformedSecondFactorCode: 'A code from your authenticator app has 6 digits; a recovery code has 16 letters and digits.',

  usePasskeyButton: 'Use a passkey',
  passkeyInstead: 'Or confirm it is you with one of your passkeys.',
  passkeySecondFactorIntro: 'Confirm it is you with one of your passkeys.',
  signInWithPasskeyButton: 'Sign in with a passkey',
  passkeySignInIntro: 'Or sign in without a password, with a passkey on this device or your phone.',
  passkeyNotUsed: 'The passkey was not used. Try again, or choose another way to sign in.',
  passkeyRefused: 'That passkey cannot sign you in here. Try again, or choose another way to sign in.',
  passkeyOnlyNotAllowed: 'Signing in with a passkey alone is not turned on for your organisation. Sign in with your username and password.',
  ssoRequiredIntro: (provider) => `Your organisation signs you in through ${provider}.`,
  ssoRequiredNoPassword: 'Your password is not used here: continue with your organisation\'s sign-in.',

  consentTitle: 'Allow access?',
  consentHeading: (app) => `Allow ${app} to access your account?`,
  consentRegisteredBy: (owner) => `Registered by ${owner}`,
  consentThePlatform: 'the platform',
  consentAsks: 'This application asks to:',
  consentNotAvailable: '(not available: you do not hold this permission)',
  allowButton: 'Allow',
  denyButton: 'Deny',

  enrolTitle: 'Set up two-step verification',
  enrolIntro: 'Your organization asks for a second step when you sign in. Scan this QR code with an authenticator app on your phone (or type the key below into it), then enter the 6-digit code it shows.',
  enrolResetIntro: 'Your administrator reset your two-step verification. Set up your authenticator app again: scan this QR code (or type the key below), then enter the 6-digit code it shows. Your old app and recovery codes stop working.',
  enrolQrLabel: 'QR code for your authenticator app',
  enrolSecretLabel: 'Key to type into the app',
  enrolCodeLabel: 'Code from your authenticator app',
  enrolButton: 'Turn on',
  enrolExpired: 'The setup ran out of time. Scan this new QR code and enter the code it shows.',
  enrolWrongCode: 'That code is not right. Enter the code your app shows now for this account.',
  enrolMalformedCode: 'A code from your authenticator app has 6 digits.',
  recoveryCodesTitle: 'Your recovery codes',
  recoveryCodesIntro: 'Keep these ten codes somewhere safe. If you lose your phone, each one signs you in once instead of a code from the app. They are shown only this once.',
  recoveryCodesShownOnce: 'Your recovery codes were shown once and are not shown again. You can make new ones in the portal, under Security.',

  scopeOpenid: 'Know who you are (your user ID)',
  scopeProfile: 'See your name',
  scopeEmail: 'See your email address',
  scopeOfflineAccess: 'Stay connected while you are away',
  scopeManagementApi: 'Integration setup',
  scopeManagement: MANAGEMENT_SCOPE_WORDS,

  signOutTitle: 'Sign out',
  signOutHeading: 'Sign out',
  signOutAppAsks: (app) => `${app} asks you to sign out.`,
  signOutQuestion: 'Do you want to sign out?',
  signOutPasswordNextTime: 'You will be asked for your password the next time an application signs you in.',
  signOutButton: 'Sign out',
  notSignedInTitle: 'Signed out',
  notSignedInHeading: 'You are not signed in',
  notSignedInBackTo: (app) => `Continue to go back to ${app}.`,
  notSignedInBack: 'Continue to go back.',
  notSignedInNothingToEnd: 'There is no session to end.',
  continueButton: 'Continue',
  signedOutTitle: 'Signed out',
  signedOutHeading: 'You are signed out',
  signedOutOfApp: (app) => `You signed out of ${app} and this sign-in service.`,
  signedOutOfService: 'You signed out of this sign-in service.',
  signedOutClose: 'You can close this window.',
  upstreamSignOutReturnInvalid: 'This link back from your organisation\'s sign-out is not valid or has expired. Nothing was done here. If you were signing out, you are signed out of this service: go back to the application.',

  errorTitle: 'Sign-in error',
  errorHeading: 'Sign-in cannot continue',
  errorReturnToApp: 'Return to the application and try again. If this keeps happening, contact its publisher.',
  errorDetails: 'Details',
  waitHeading: 'Please wait a moment',
  tooManyRequests: (seconds) => `Too many sign-in attempts from your network. Try again in ${seconds} seconds.`,
  requestTooLarge: (bytes) => `The sign-in request is larger than ${bytes} bytes.`,
  requestNotAForm: 'The request must be a form (application/x-www-form-urlencoded) with each parameter once.',
  serviceUnavailable: 'The service is temporarily unavailable. Try again in a moment.',
  requestFailed: 'The request could not be completed.',
  methodNotAllowed: 'Method not allowed.',
  formFromOtherSite: 'This form was sent from another site.',
  formExpired: 'This form has expired. Go back to the application and sign in again.',
  formTooLarge: 'The form is too large.',
  formEncoding: 'Unsupported form encoding.',
  signInExpired: 'This sign-in has expired or was already completed. Go back to the application and start again.',
  signInOtherBrowser: 'This sign-in does not belong to this browser.',
  signInStepOver: 'This sign-in step is over.',
  signInPageMissing: 'This sign-in page does not exist.',
  appNotRegistered: 'This application is no longer registered.',
  sessionEnded: 'Your session has ended. Go back to the application and sign in again.',
  chooseAllowOrDeny: 'Choose Allow or Deny.',
};
