export {
  createTokenVerifier,
  checkScopes,
  checkTenant,
  TokenError,
  type AccessTokenContext,
  type TokenVerifier,
  type TokenVerifierOptions,
  type IntrospectionOptions,
} from './verifier.js';
export { authenticate, requireScopes, requireTenant, type AuthState, type KoaLikeContext, type KoaLikeMiddleware, type KoaLikeNext } from './koa.js';
export { expressAuthenticate, expressRequireScopes, expressRequireTenant, type ExpressLikeRequest, type ExpressLikeResponse } from './express.js';
export { constraintsFor, filterByConstraints, passesConstraints } from './constraints.js';
