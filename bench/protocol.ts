/** What the bench parent and its server children say to each other over the fork IPC channel. */

export const ALGORITHMS = ['ES256', 'RS256'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

export function parseAlgorithm(value: string | undefined): Algorithm {
  const found = ALGORITHMS.find((alg) => alg === value);
  if (!found) throw new Error(`expected an algorithm (${ALGORITHMS.join(', ')}), got ${String(value)}`);
  return found;
}

/**
 * The ID-token algorithms of the named-user workloads (BENCH_ID_TOKEN_ALGS): each side has one app
 * per algorithm, registered with it (`id_token_signed_response_alg`), and signs with the shared keys.
 */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
export type IdTokenAlgorithm = (typeof ID_TOKEN_ALGORITHMS)[number];

export function parseIdTokenAlgorithm(value: string | undefined): IdTokenAlgorithm {
  const found = ID_TOKEN_ALGORITHMS.find((alg) => alg === value);
  if (!found) throw new Error(`expected an ID-token algorithm (${ID_TOKEN_ALGORITHMS.join(', ')}), got ${String(value)}`);
  return found;
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** A confidential named-user app: code exchange (PKCE S256) and refresh-token rotation. */
export interface AppClient extends ClientCredentials {
  redirectUri: string;
}

/** Where and as whom to ask one server process for tokens. */
export interface ServerTarget {
  /** Where the process listens, when that is not the origin of the URLs below (the soak's shared base URL). */
  listenUrl?: string;
  tokenUrl: string;
  /** Userinfo and introspection: ours's, or the bare engine's own (`/me`, `/token/introspection`). */
  userinfoUrl: string;
  introspectionUrl: string;
  /** The client_credentials client (a service). */
  service: ClientCredentials;
  /** The named-user app with RS256 ID tokens (`apps.RS256`): userinfo's and introspection's codes. */
  app: AppClient;
  /** One named-user app per ID-token algorithm, registered with it: the code exchange and refresh workloads. */
  apps: Record<IdTokenAlgorithm, AppClient>;
  /** A service like `service` that authenticates with private_key_jwt (the bench client key), DPoP optional. */
  keyService: { clientId: string };
  /** A service like `service` (Basic) whose tokens must be DPoP-bound (DPoP required). */
  dpopService: ClientCredentials;
}

/** An authorization code ready to be exchanged, with the PKCE verifier of its challenge. */
export interface MintedCode {
  code: string;
  verifier: string;
}

/**
 * What minted codes are for: `exchange`, the code exchange and refresh workloads; `lifecycle`, the
 * access tokens of the userinfo and introspection workloads (the bare engine must then issue an
 * opaque token without audience, the only kind its userinfo answers; ours mints the same codes).
 */
export const MINT_PURPOSES = ['exchange', 'lifecycle'] as const;
export type MintPurpose = (typeof MINT_PURPOSES)[number];

/** Parent → server child. */
export type ServerRequest =
  | { type: 'mint'; count: number; purpose: MintPurpose; idTokenAlg: IdTokenAlgorithm }
  | { type: 'profile-start'; intervalMicros: number }
  | { type: 'profile-stop'; file: string };

/** Server child → parent. */
export type ServerReply =
  | { type: 'ready'; target: ServerTarget }
  | { type: 'failed'; error: string }
  | { type: 'minted'; codes: MintedCode[] }
  | { type: 'profiled'; file: string };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const strings = (value: unknown, fields: string[]) => isObject(value) && fields.every((field) => typeof value[field] === 'string');

function isServerTarget(value: unknown): value is ServerTarget {
  return (
    strings(value, ['tokenUrl', 'userinfoUrl', 'introspectionUrl'])
    && strings((value as Record<string, unknown>).service, ['clientId', 'clientSecret'])
    && strings((value as Record<string, unknown>).app, ['clientId', 'clientSecret', 'redirectUri'])
    && isObject((value as Record<string, unknown>).apps)
    && ID_TOKEN_ALGORITHMS.every((alg) => strings(((value as Record<string, unknown>).apps as Record<string, unknown>)[alg], ['clientId', 'clientSecret', 'redirectUri']))
    && strings((value as Record<string, unknown>).keyService, ['clientId'])
    && strings((value as Record<string, unknown>).dpopService, ['clientId', 'clientSecret'])
  );
}

export function isServerReply(value: unknown): value is ServerReply {
  if (!isObject(value)) return false;
  switch (value.type) {
    case 'ready':
      return isServerTarget(value.target);
    case 'failed':
      return typeof value.error === 'string';
    case 'minted':
      return Array.isArray(value.codes) && value.codes.every((code) => strings(code, ['code', 'verifier']));
    case 'profiled':
      return typeof value.file === 'string';
    default:
      return false;
  }
}

export function isServerRequest(value: unknown): value is ServerRequest {
  if (!isObject(value)) return false;
  switch (value.type) {
    case 'mint':
      return Number.isInteger(value.count) && (value.count as number) > 0 && MINT_PURPOSES.some((purpose) => purpose === value.purpose)
        && ID_TOKEN_ALGORITHMS.some((alg) => alg === value.idTokenAlg);
    case 'profile-start':
      return typeof value.intervalMicros === 'number';
    case 'profile-stop':
      return typeof value.file === 'string';
    default:
      return false;
  }
}
