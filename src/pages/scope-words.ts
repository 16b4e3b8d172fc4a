/** OpenID Connect scopes in words, for the consent page and the consent API. */
export const OIDC_SCOPE_WORDS: Record<string, string> = {
  openid: 'Know who you are (your user ID)',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Stay connected while you are away',
};
