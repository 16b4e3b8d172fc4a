export {
  createTokenVerifier,
  checkScopes,
  checkTenant,
  checkSecondFactor,
  checkRecentSignIn,
  recentSignInSeconds,
  TokenError,
  type AccessTokenContext,
  type TokenVerifier,
  type TokenVerifierOptions,
  type IntrospectionOptions,
  type AuthorizedRequest,
} from './verifier.js';
export type { DpopNonceOptions, DpopRequest } from './dpop.js';
export { authenticate, requireScopes, requireTenant, requireSecondFactor, requireRecentSignIn, type AuthState, type KoaLikeContext, type KoaLikeMiddleware, type KoaLikeNext } from './koa.js';
export { expressAuthenticate, expressRequireScopes, expressRequireTenant, expressRequireSecondFactor, expressRequireRecentSignIn, type ExpressLikeRequest, type ExpressLikeResponse } from './express.js';
export { constraintsFor, filterByConstraints, passesConstraints } from './constraints.js';
export { ACR_MFA, ACR_PASSWORD, ACR_VALUES } from '../../policies/authentication-context.js';
