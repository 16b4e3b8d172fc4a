export {
  createTokenVerifier,
  checkScopes,
  TokenError,
  type AccessTokenContext,
  type TokenVerifier,
  type TokenVerifierOptions,
} from './verifier.js';
export { authenticate, requireScopes, type AuthState, type KoaLikeContext, type KoaLikeMiddleware, type KoaLikeNext } from './koa.js';
export { expressAuthenticate, expressRequireScopes, type ExpressLikeRequest, type ExpressLikeResponse } from './express.js';
export { constraintsFor, filterByConstraints, passesConstraints } from './constraints.js';
