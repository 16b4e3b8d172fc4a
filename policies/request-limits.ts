/**
 * Sizes of what a browser's request may carry into the store, for requests anyone can send
 * without credentials (an authorization request, a sign-out).
 */

/** The longest `state` or `nonce` a request may carry: kept until the sign-in or sign-out ends. */
export const MAX_STATE_OR_NONCE = 1024;
