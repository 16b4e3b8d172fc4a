// The public API of talent-auth: the declared types of every entry point of package.json "exports",
// comments and private members left out. Written by `npm run api:update`, which needs a new entry
// under "## [Unreleased]" in CHANGELOG.md for a changed API; `npm test` fails when the built
// declarations differ from this file (docs/versioning.md, "The public API check"). Not edited by hand.
// changelog-unreleased-sha256: def642b672e32e3d9a9987d4261b039a8a2e4465421b93dbb1dc4a4430241354

declare module 'talent-auth' {
  export { AccessDenied };
  export { type AccessTokenContext };
  export { type Account };
  export { type AccountStore };
  export { ACR_MFA };
  export { ACR_PASSWORD };
  export { ACR_VALUES };
  export { type ApiDefinition };
  export { type ApiDefinitionInput };
  export { type AppRegistration };
  export { type AppRegistrationInput };
  export { type AppRegistrationPatch };
  export { type AppRegistrations };
  export { AUDIT_EVENT_TYPES };
  export { type AuditActor };
  export { type AuditEvent };
  export { type AuditEventPage };
  export { type AuditEventType };
  export { type AuditHook };
  export { type AuditQuery };
  export { type AuditTarget };
  export { authenticate };
  export { type AuthenticationMethod };
  export { type AuthorizedRequest };
  export { type AuthServer };
  export { type AuthServerOptions };
  export { type AuthState };
  export { BACKUP_DOCUMENT };
  export { BACKUP_FORMAT };
  export { BACKUP_VERSION };
  export { type BackupApi };
  export { type BackupDocument };
  export { type BackupExportOptions };
  export { type BackupImportCounts };
  export { type BackupImportOptions };
  export { type BackupImportResult };
  export { type BackupKind };
  export { BodyConsumedByHost };
  export { type Branding };
  export { type BrandingOption };
  export { checkRecentSignIn };
  export { checkScopes };
  export { checkSecondFactor };
  export { checkTenant };
  export { type ClaimMapping };
  export { type ClientConfiguration };
  export { type ClientConfigurationInput };
  export { type ClientConfigurationPatch };
  export { type ClientConfigurations };
  export { type ClientType };
  export { Conflict };
  export { type Connection };
  export { type ConnectionInput };
  export { type ConnectionPatch };
  export { type ConnectionsApi };
  export { type ConnectMiddleware };
  export { type Consent };
  export { type ConsentKey };
  export { type ConsentsApi };
  export { type Constraints };
  export { constraintsFor };
  export { createAuthServer };
  export { createLogger };
  export { createTokenVerifier };
  export { type DimensionFilters };
  export { type DpopNonceOptions };
  export { type DpopRequest };
  export { type DpopRule };
  export { type ErrorHeaders };
  export { expressAuthenticate };
  export { type ExpressLikeRequest };
  export { type ExpressLikeResponse };
  export { expressRequireRecentSignIn };
  export { expressRequireScopes };
  export { expressRequireSecondFactor };
  export { expressRequireTenant };
  export { type ExternalSigner };
  export { type FactorListEntry };
  export { type FactorOwner };
  export { type FactorsApi };
  export { type FactorSummary };
  export { type FederatedClaims };
  export { type FederationRequest };
  export { filterByConstraints };
  export { fromPino };
  export { type HostSecondFactor };
  export { type I18nOptions };
  export { type IdTokenAlgorithm };
  export { InsufficientScope };
  export { InsufficientUserAuthentication };
  export { INTEGRATION_SETUP };
  export { type IntrospectionOptions };
  export { InvalidBearerRequest };
  export { InvalidClient };
  export { InvalidGrant };
  export { InvalidRequest };
  export { InvalidScope };
  export { InvalidTarget };
  export { InvalidToken };
  export { KeysUnavailable };
  export { type KoaLikeContext };
  export { type KoaLikeMiddleware };
  export { type KoaLikeNext };
  export { type LocaleRequest };
  export { type Logger };
  export { type MappableClaim };
  export { type Messages };
  export { MethodNotAllowed };
  export { MountedWrong };
  export { negotiateLocale };
  export { NotFound };
  export { NotSupported };
  export { OAuthError };
  export { type OperatorName };
  export { passesConstraints };
  export { PayloadTooLarge };
  export { type PortalText };
  export { type PortalTextOverrides };
  export { type PrivateJwks };
  export { recentSignInSeconds };
  export { REDACTED_FIELDS };
  export { RequestTimeout };
  export { requireRecentSignIn };
  export { requireScopes };
  export { requireSecondFactor };
  export { requireTenant };
  export { type Resources };
  export { type SecondFactorUser };
  export { ServerError };
  export { type SigningAlgorithm };
  export { type SignInsApi };
  export { type SignInUnlockRequest };
  export { type SignInUnlockResult };
  export { StoreFormatError };
  export { StoreStartError };
  export { TemporarilyUnavailable };
  export { TenantMoved };
  export { type TenantPolicy };
  export { type TenantPolicyFunction };
  export { TokenError };
  export { TokenStatusUnavailable };
  export { type TokenVerifier };
  export { type TokenVerifierOptions };
  export { TooManyRequests };
  export { type TotpEnrolment };
  export { UnauthorizedClient };
  export { UnmetAuthenticationRequirements };
  export { UnsupportedGrantType };
  export { UnsupportedMediaType };
  export { type UpstreamAuthMethod };
  export { type UserAuthenticationNeeded };
  export { type UsersApi };
  export { type UserSignOutRequest };
  export { type UserSignOutResult };
  export { ValidationError };
}

declare module 'talent-auth/resource-server' {
  export { type AccessTokenContext };
  export { ACR_MFA };
  export { ACR_PASSWORD };
  export { ACR_VALUES };
  export { authenticate };
  export { type AuthorizedRequest };
  export { type AuthState };
  export { checkRecentSignIn };
  export { checkScopes };
  export { checkSecondFactor };
  export { checkTenant };
  export { constraintsFor };
  export { createTokenVerifier };
  export { type DpopNonceOptions };
  export { type DpopRequest };
  export { expressAuthenticate };
  export { type ExpressLikeRequest };
  export { type ExpressLikeResponse };
  export { expressRequireRecentSignIn };
  export { expressRequireScopes };
  export { expressRequireSecondFactor };
  export { expressRequireTenant };
  export { filterByConstraints };
  export { type IntrospectionOptions };
  export { type KoaLikeContext };
  export { type KoaLikeMiddleware };
  export { type KoaLikeNext };
  export { passesConstraints };
  export { recentSignInSeconds };
  export { requireRecentSignIn };
  export { requireScopes };
  export { requireSecondFactor };
  export { requireTenant };
  export { TokenError };
  export { type TokenVerifier };
  export { type TokenVerifierOptions };
}

export declare class AccessDenied extends OAuthError {
    constructor(description: string);
}

export interface AccessTokenContext {
    sub: string;
    clientId: string;
    tenant: string | undefined;
    scopes: ReadonlySet<string>;
    constraints: Constraints;
    isNamedUser: boolean;
    amr: readonly string[];
    acr: string | undefined;
    authTime: number | undefined;
    claims: JWTPayload;
}

export interface Account {
    sub: string;
    tenant: string;
    claims?: {
        name?: string;
        email?: string;
        [claim: string]: unknown;
    };
    permissions?: string[];
    scopes?: string[];
}

export interface AccountStore {
    authenticate(credentials: {
        username: string;
        password: string;
    }): Promise<Account | undefined>;
    findAccount(sub: string): Promise<Account | undefined>;
    findByUsername?(username: string): Promise<Account | undefined>;
    secondFactor?: HostSecondFactor;
    federate?(request: FederationRequest): Promise<Account | undefined>;
}

export declare const ACR_MFA = "urn:talent-auth:acr:mfa";

export declare const ACR_PASSWORD = "urn:talent-auth:acr:pwd";

export declare const ACR_VALUES: readonly string[];

export interface ApiDefinition {
    id: string;
    name: string;
    scopes: Record<string, string>;
    scopeTranslations?: Record<string, Record<string, string>>;
    constraints: string[];
}

export type ApiDefinitionInput = z.input<typeof apiSchema>;

declare const apiSchema: z.ZodObject<{
    id: z.ZodString;
    name: z.ZodString;
    scopes: z.ZodRecord<z.ZodString, z.ZodType<string | ({
        en: string;
    } & Record<string, string>), string | ({
        en: string;
    } & Record<string, string>), z.core.$ZodTypeInternals<string | ({
        en: string;
    } & Record<string, string>), string | ({
        en: string;
    } & Record<string, string>)>>>;
    constraints: z.ZodDefault<z.ZodArray<z.ZodString>>;
}, z.core.$strict>;

export interface AppRegistration {
    clientId: string;
    name: string;
    description?: string;
    redirectUris: string[];
    clientType: ClientType;
    pkceEnabled: boolean;
    idTokenSigningAlg: IdTokenAlgorithm;
    firstParty: boolean;
    tenant?: string;
    openToAllTenants: boolean;
    resourceServer: boolean;
    postLogoutRedirectUris: string[];
    requirePushedAuthorizationRequests: boolean;
    backchannelLogoutUri?: string;
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    jwks?: ClientJwks;
    jwksUri?: string;
    dpop?: DpopRule;
    profile?: SecurityProfile;
    createdAt: string;
    updatedAt: string;
}

export interface AppRegistrationInput {
    name: string;
    description?: string;
    redirectUris: string[];
    clientType: ClientType;
    pkceEnabled?: boolean;
    idTokenSigningAlg?: IdTokenAlgorithm;
    firstParty?: boolean;
    tenant?: string;
    openToAllTenants?: boolean;
    resourceServer?: boolean;
    postLogoutRedirectUris?: string[];
    requirePushedAuthorizationRequests?: boolean;
    backchannelLogoutUri?: string;
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    jwks?: ClientJwks;
    jwksUri?: string;
    dpop?: DpopRule;
    profile?: SecurityProfile;
}

export type AppRegistrationPatch = Partial<Omit<AppRegistrationInput, 'tenant'>>;

export declare class AppRegistrations {
    publicWebOrigins(): Promise<ReadonlySet<string>>;
    create(input: AppRegistrationInput, by?: AuditContext): Promise<AppRegistration & {
        clientSecret?: string;
    }>;
    ensureBuiltIn(clientId: string, input: AppRegistrationInput, clientSecret: string): Promise<void>;
    get(clientId: string): Promise<AppRegistration | undefined>;
    list(): Promise<AppRegistration[]>;
    listByTenant(tenant: string): Promise<AppRegistration[]>;
    update(clientId: string, patch: AppRegistrationPatch, by?: AuditContext): Promise<AppRegistration & {
        clientSecret?: string;
    }>;
    rotateSecret(clientId: string, by?: AuditContext): Promise<{
        clientSecret: string;
    }>;
    delete(clientId: string, by?: AuditContext): Promise<boolean>;
}

export declare const AUDIT_EVENT_TYPES: readonly [
    "client_configuration.created",
    "client_configuration.updated",
    "client_configuration.secret_rotated",
    "client_configuration.deleted",
    "app_registration.created",
    "app_registration.updated",
    "app_registration.secret_rotated",
    "app_registration.deleted",
    "consent.granted",
    "consent.revoked",
    "sign_in.succeeded",
    "sign_in.failed",
    "sign_in.unlocked",
    "session.ended",
    "refresh_token.retried",
    "refresh_token.reuse_detected",
    "client_auth.rate_limited",
    "management.denied",
    "signing_key.added",
    "signing_key.promoted",
    "signing_key.retired",
    "factor.added",
    "factor.removed",
    "factor.reset",
    "sign_in.second_factor_failed",
    "recovery_code.used",
    "tenant_settings.updated",
    "connection.created",
    "connection.updated",
    "connection.deleted",
    "sign_in.federation_failed",
    "user.signed_out"
];

export interface AuditActor {
    type: 'user' | 'operator' | 'client' | 'anonymous';
    id?: string;
}

export interface AuditContext {
    actor: AuditActor;
    address?: string;
}

export interface AuditEvent {
    id: string;
    time: string;
    type: AuditEventType;
    tenant?: string;
    actor: AuditActor;
    target?: AuditTarget;
    address?: string;
    details?: Record<string, unknown>;
}

export interface AuditEventPage {
    events: AuditEvent[];
    next?: string;
}

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export type AuditHook = (event: AuditEvent) => void | Promise<void>;

export interface AuditQuery {
    tenant: string | null;
    type?: AuditEventType;
    since?: string | number;
    until?: string | number;
    limit?: number;
    cursor?: string;
}

export interface AuditTarget {
    type: 'client_configuration' | 'app_registration' | 'signing_key' | 'management_api' | 'user' | 'tenant' | 'connection';
    id: string;
}

export declare function authenticate(verifier: TokenVerifier): KoaLikeMiddleware;

export type AuthenticationMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'mfa' | 'fed' | RegisteredMethod;

export interface AuthorizedRequest extends Omit<DpopRequest, 'proof'> {
    authorization: string | undefined;
    dpop: string | undefined;
}

export interface AuthServer {
    readonly app: Koa;
    readonly middleware: ConnectMiddleware;
    readonly provider: Provider;
    readonly issuer: string;
    readonly audience: string;
    readonly clientConfigurations: ClientConfigurations;
    readonly appRegistrations: AppRegistrations;
    readonly consents: ConsentsApi;
    readonly audit: {
        list(query: AuditQuery): Promise<AuditEventPage>;
    };
    readonly signIns: SignInsApi;
    readonly factors: FactorsApi;
    readonly connections: ConnectionsApi;
    readonly users: UsersApi;
    readonly backup: BackupApi;
    readonly metrics: Registry | undefined;
    close(): Promise<void>;
}

export type AuthServerOptions = z.input<typeof optionsSchema>;

export interface AuthState {
    auth: AccessTokenContext;
}

export declare const BACKUP_DOCUMENT: z.ZodObject<{
    format: z.ZodLiteral<"talent-auth.backup">;
    version: z.ZodLiteral<1>;
    exportedAt: z.ZodISODateTime;
    tenant: z.ZodOptional<z.ZodString>;
    records: z.ZodObject<{
        clientConfigurations: z.ZodArray<z.ZodObject<{
            tokenEndpointAuthMethod: z.ZodOptional<z.ZodEnum<{
                private_key_jwt: "private_key_jwt";
                client_secret_basic: "client_secret_basic";
            }>>;
            jwks: z.ZodOptional<z.ZodObject<{
                keys: z.ZodArray<z.ZodObject<{
                    kty: z.ZodEnum<{
                        RSA: "RSA";
                        EC: "EC";
                        OKP: "OKP";
                    }>;
                    kid: z.ZodOptional<z.ZodString>;
                    alg: z.ZodOptional<z.ZodString>;
                    use: z.ZodOptional<z.ZodString>;
                }, z.core.$loose>>;
            }, z.core.$strict>>;
            jwksUri: z.ZodOptional<z.ZodString>;
            dpop: z.ZodOptional<z.ZodEnum<{
                optional: "optional";
                required: "required";
            }>>;
            profile: z.ZodOptional<z.ZodEnum<{
                standard: "standard";
                "high-security": "high-security";
            }>>;
            secretDigest: z.ZodOptional<z.ZodString>;
            createdAt: z.ZodISODateTime;
            updatedAt: z.ZodISODateTime;
            clientId: z.ZodString;
            tenant: z.ZodString;
            name: z.ZodString;
            category: z.ZodString;
            description: z.ZodOptional<z.ZodPipe<z.ZodPipe<z.ZodString, z.ZodTransform<string, string>>, z.ZodString>>;
            resources: z.ZodRecord<z.ZodString, z.ZodObject<{
                scopes: z.ZodArray<z.ZodString>;
                constraints: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodArray<z.ZodString>>>;
            }, z.core.$strict>>;
            jwksUriAuthor: z.ZodOptional<z.ZodEnum<{
                tenant: "tenant";
                operator: "operator";
            }>>;
        }, z.core.$strict>>;
        appRegistrations: z.ZodArray<z.ZodObject<{
            tokenEndpointAuthMethod: z.ZodOptional<z.ZodEnum<{
                private_key_jwt: "private_key_jwt";
                client_secret_basic: "client_secret_basic";
            }>>;
            jwks: z.ZodOptional<z.ZodObject<{
                keys: z.ZodArray<z.ZodObject<{
                    kty: z.ZodEnum<{
                        RSA: "RSA";
                        EC: "EC";
                        OKP: "OKP";
                    }>;
                    kid: z.ZodOptional<z.ZodString>;
                    alg: z.ZodOptional<z.ZodString>;
                    use: z.ZodOptional<z.ZodString>;
                }, z.core.$loose>>;
            }, z.core.$strict>>;
            jwksUri: z.ZodOptional<z.ZodString>;
            dpop: z.ZodOptional<z.ZodEnum<{
                optional: "optional";
                required: "required";
            }>>;
            profile: z.ZodOptional<z.ZodEnum<{
                standard: "standard";
                "high-security": "high-security";
            }>>;
            secretDigest: z.ZodOptional<z.ZodString>;
            createdAt: z.ZodISODateTime;
            updatedAt: z.ZodISODateTime;
            clientId: z.ZodString;
            name: z.ZodString;
            description: z.ZodOptional<z.ZodPipe<z.ZodPipe<z.ZodString, z.ZodTransform<string, string>>, z.ZodString>>;
            redirectUris: z.ZodArray<z.ZodString>;
            clientType: z.ZodEnum<{
                public: "public";
                confidential: "confidential";
            }>;
            pkceEnabled: z.ZodBoolean;
            idTokenSigningAlg: z.ZodEnum<{
                ES256: "ES256";
                RS256: "RS256";
                PS256: "PS256";
                EdDSA: "EdDSA";
            }>;
            firstParty: z.ZodBoolean;
            tenant: z.ZodOptional<z.ZodString>;
            openToAllTenants: z.ZodOptional<z.ZodBoolean>;
            resourceServer: z.ZodOptional<z.ZodBoolean>;
            postLogoutRedirectUris: z.ZodOptional<z.ZodArray<z.ZodString>>;
            requirePushedAuthorizationRequests: z.ZodOptional<z.ZodBoolean>;
            backchannelLogoutUri: z.ZodOptional<z.ZodString>;
        }, z.core.$strict>>;
        tenantSettings: z.ZodArray<z.ZodObject<{
            tenant: z.ZodString;
            settings: z.ZodObject<{
                secondFactor: z.ZodOptional<z.ZodEnum<{
                    optional: "optional";
                    required: "required";
                    required_for_permissions: "required_for_permissions";
                }>>;
                passkeyOnlySignIn: z.ZodOptional<z.ZodBoolean>;
                sso: z.ZodOptional<z.ZodEnum<{
                    optional: "optional";
                    required: "required";
                }>>;
                profile: z.ZodOptional<z.ZodEnum<{
                    standard: "standard";
                    "high-security": "high-security";
                }>>;
                updatedAt: z.ZodOptional<z.ZodISODateTime>;
            }, z.core.$strict>;
        }, z.core.$strict>>;
        consents: z.ZodOptional<z.ZodArray<z.ZodObject<{
            tenant: z.ZodString;
            sub: z.ZodString;
            clientId: z.ZodString;
            grantId: z.ZodString;
            scopes: z.ZodArray<z.ZodString>;
            createdAt: z.ZodISODateTime;
            updatedAt: z.ZodISODateTime;
        }, z.core.$strict>>>;
    }, z.core.$strict>;
}, z.core.$strict>;

export declare const BACKUP_FORMAT = "talent-auth.backup";

export declare const BACKUP_VERSION = 1;

export interface BackupApi {
    export(options?: BackupExportOptions): Promise<BackupDocument>;
    import(document: unknown, options?: BackupImportOptions & OperatorName): Promise<BackupImportResult>;
}

export type BackupDocument = z.output<typeof BACKUP_DOCUMENT>;

export interface BackupExportOptions {
    tenant?: string;
    consents?: boolean;
}

export type BackupImportCounts = Record<BackupKind, {
    created: number;
    updated: number;
    unchanged: number;
}>;

export interface BackupImportOptions {
    dryRun?: boolean;
    overwrite?: boolean;
}

export interface BackupImportResult {
    dryRun: boolean;
    counts: BackupImportCounts;
}

export type BackupKind = keyof BackupDocument['records'];

export declare class BodyConsumedByHost extends ServerError {
}

export type Branding = z.input<typeof brandingSchema>;

export type BrandingOption = Branding | ((tenant: string | undefined) => Branding | undefined | Promise<Branding | undefined>);

declare const brandingSchema: z.ZodObject<{
    productName: z.ZodOptional<z.ZodString>;
    logoUrl: z.ZodOptional<z.ZodString>;
    accentColor: z.ZodOptional<z.ZodString>;
}, z.core.$strict>;

export declare function checkRecentSignIn(auth: AccessTokenContext, minutes: number, realm: string, now?: number): void;

export declare function checkScopes(auth: AccessTokenContext, required: readonly string[], realm: string): void;

export declare function checkSecondFactor(auth: AccessTokenContext, realm: string): void;

export declare function checkTenant(auth: AccessTokenContext, tenant: string | undefined, realm: string): void;

export type ClaimMapping = Partial<Record<MappableClaim, string>>;

export declare const CLIENT_ASSERTION_ALGS: readonly [
    "RS256",
    "PS256",
    "ES256",
    "EdDSA",
    "Ed25519"
];

export interface ClientConfiguration {
    clientId: string;
    tenant: string;
    name: string;
    category: string;
    description?: string;
    resources: Resources;
    tokenEndpointAuthMethod: TokenEndpointAuthMethod;
    jwks?: ClientJwks;
    jwksUri?: string;
    dpop?: DpopRule;
    profile?: SecurityProfile;
    createdAt: string;
    updatedAt: string;
}

export interface ClientConfigurationInput {
    tenant: string;
    name: string;
    category: string;
    description?: string;
    resources: Resources;
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    jwks?: ClientJwks;
    jwksUri?: string;
    dpop?: DpopRule;
    profile?: SecurityProfile;
}

export type ClientConfigurationPatch = Partial<Omit<ClientConfigurationInput, 'tenant'>>;

export declare class ClientConfigurations {
    create<I extends ClientConfigurationInput>(input: I, by?: AuditContext, author?: KeysAuthor): Promise<ClientConfiguration & CreatedSecret<I>>;
    get(clientId: string): Promise<ClientConfiguration | undefined>;
    list(tenant: string): Promise<ClientConfiguration[]>;
    update(clientId: string, patch: ClientConfigurationPatch, by?: AuditContext, author?: KeysAuthor): Promise<ClientConfiguration & {
        clientSecret?: string;
    }>;
    rotateSecret(clientId: string, by?: AuditContext): Promise<{
        clientSecret: string;
    }>;
    delete(clientId: string, by?: AuditContext): Promise<boolean>;
}

export interface ClientJwk {
    kty: 'RSA' | 'EC' | 'OKP';
    kid?: string;
    alg?: (typeof CLIENT_ASSERTION_ALGS)[number];
    use?: 'sig';
    [member: string]: unknown;
}

export interface ClientJwks {
    keys: ClientJwk[];
}

export type ClientType = 'public' | 'confidential';

declare const clusterSettings: z.ZodObject<{
    nodes: z.ZodArray<z.ZodString>;
}, z.core.$strict>;

export declare class Conflict extends OAuthError {
    constructor(what: string);
}

export interface Connection {
    id: string;
    tenant: string;
    name: string;
    issuer: string;
    clientId: string;
    tokenEndpointAuthMethod: UpstreamAuthMethod;
    hasClientSecret: boolean;
    scopes: string[];
    domains: string[];
    verifiedDomains: string[];
    claimMapping: ClaimMapping;
    redirectUri?: string;
    signOutUpstream: boolean;
    mfaAcrValues: string[];
    createdAt: string;
    updatedAt: string;
}

export interface ConnectionInput {
    tenant: string;
    name: string;
    issuer: string;
    clientId: string;
    clientSecret?: string;
    tokenEndpointAuthMethod?: UpstreamAuthMethod;
    scopes?: string[];
    domains: string[];
    claimMapping?: ClaimMapping;
    signOutUpstream?: boolean;
    mfaAcrValues?: string[];
}

export type ConnectionPatch = Partial<Omit<ConnectionInput, 'tenant'>>;

export interface ConnectionsApi {
    create(input: ConnectionInput & OperatorName): Promise<Connection>;
    list(tenant: string): Promise<Connection[]>;
    get(id: string): Promise<Connection | undefined>;
    update(id: string, patch: ConnectionPatch & OperatorName): Promise<Connection>;
    delete(id: string, by?: OperatorName): Promise<boolean>;
}

export type ConnectMiddleware = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export interface Consent {
    clientId: string;
    appName: string | undefined;
    scopes: Array<{
        scope: string;
        description: string;
        api?: string;
    }>;
    createdAt: string;
    updatedAt: string;
}

export interface ConsentKey {
    tenant: string;
    sub: string;
}

export interface ConsentsApi {
    list(key: ConsentKey): Promise<Consent[]>;
    revoke(key: ConsentKey & {
        clientId: string;
    }): Promise<boolean>;
}

export type Constraints = Record<string, DimensionFilters>;

export declare function constraintsFor(auth: AccessTokenContext, apiId: string): DimensionFilters | undefined;

export declare function createAuthServer(input: AuthServerOptions): Promise<AuthServer>;

export type CreatedSecret<I extends ClientConfigurationInput> = I extends {
    tokenEndpointAuthMethod: 'private_key_jwt';
} ? {
    clientSecret?: undefined;
} : I extends {
    tenant: string;
    tokenEndpointAuthMethod?: 'client_secret_basic' | undefined;
} ? {
    clientSecret: string;
} : {
    clientSecret?: string;
};

export declare function createLogger(settings?: {
    level?: string;
    destination?: DestinationStream;
}): Logger;

export declare function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier;

export type DimensionFilters = Record<string, string[]>;

export interface DpopNonceOptions {
    secret?: string;
    windowSeconds?: number;
}

export interface DpopRequest {
    proof: string | undefined;
    method: string;
    url: string;
}

export type DpopRule = 'required' | 'optional';

export type ErrorHeaders = Record<string, string>;

export declare function expressAuthenticate(verifier: TokenVerifier): (req: ExpressLikeRequest, res: ExpressLikeResponse, next: NextFunction) => void;

export interface ExpressLikeRequest {
    headers: {
        authorization?: string | undefined;
        dpop?: string | string[] | undefined;
        host?: string | undefined;
    };
    auth?: AccessTokenContext;
    method?: string;
    protocol?: string;
    originalUrl?: string;
    host?: string;
    get?(name: string): string | undefined;
}

export interface ExpressLikeResponse {
    status(code: number): this;
    set(name: string, value: string): this;
    json(body: unknown): void;
}

export declare function expressRequireRecentSignIn(verifier: TokenVerifier, minutes: number): (req: ExpressLikeRequest, res: ExpressLikeResponse, next: NextFunction) => void;

export declare function expressRequireScopes(verifier: TokenVerifier, ...scopes: string[]): (req: ExpressLikeRequest, res: ExpressLikeResponse, next: NextFunction) => void;

export declare function expressRequireSecondFactor(verifier: TokenVerifier): (req: ExpressLikeRequest, res: ExpressLikeResponse, next: NextFunction) => void;

export declare function expressRequireTenant<R extends ExpressLikeRequest>(verifier: TokenVerifier, tenantOf: (req: R) => string | undefined): (req: R, res: ExpressLikeResponse, next: NextFunction) => void;

export interface ExternalSigner {
    kid: string;
    alg: SigningAlgorithm;
    publicKey: JWK;
    sign(data: Uint8Array): Promise<Uint8Array>;
}

export interface FactorListEntry {
    id: string;
    type: 'passkey' | 'totp' | 'recovery_codes';
    createdAt: string;
    label?: string;
}

export interface FactorOwner {
    tenant: string;
    sub: string;
}

export interface FactorsApi {
    list(owner: FactorOwner): Promise<FactorListEntry[]>;
    enrollTotp(request: FactorOwner & {
        accountName?: string;
    }): Promise<TotpEnrolment>;
    remove(request: FactorOwner & {
        id: string;
    }): Promise<boolean>;
    reset(request: FactorOwner & OperatorName): Promise<boolean>;
}

export interface FactorSummary {
    authenticatorApp: {
        addedAt: string;
    } | undefined;
    recoveryCodes: {
        remaining: number;
        createdAt: string;
    } | undefined;
    passkeys: Array<{
        id: string;
        name: string;
        createdAt: string;
        backedUp: boolean;
    }>;
    resetRequested: boolean;
    hostFactor: boolean;
}

export interface FederatedClaims {
    sub: string;
    email?: string;
    email_verified?: boolean;
    name?: string;
    given_name?: string;
    family_name?: string;
    preferred_username?: string;
    locale?: string;
}

export interface FederationRequest {
    tenant: string;
    connection: {
        id: string;
        name: string;
        issuer: string;
    };
    claims: FederatedClaims;
}

export declare function filterByConstraints<T>(auth: AccessTokenContext, apiId: string, records: readonly T[], valueOf?: (record: T, dimension: string) => unknown): T[];

export declare function fromPino(instance: PinoLogger): Logger;

export interface HostSecondFactor {
    has(user: SecondFactorUser): boolean | Promise<boolean>;
    check(request: SecondFactorUser & {
        code: string;
    }): boolean | Promise<boolean>;
}

export type I18nOptions = z.input<typeof i18nSchema>;

declare const i18nSchema: z.ZodObject<{
    messages: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodType<Partial<Messages>, Partial<Messages>, z.core.$ZodTypeInternals<Partial<Messages>, Partial<Messages>>>>>;
    defaultLocale: z.ZodOptional<z.ZodString>;
}, z.core.$strict>;

export type IdTokenAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

export declare class InsufficientScope extends TokenError {
    constructor(description: string, realm: string, scope?: readonly string[]);
}

export declare class InsufficientUserAuthentication extends TokenError {
    readonly needed: UserAuthenticationNeeded;
    constructor(description: string, realm: string, needed: UserAuthenticationNeeded);
}

export declare const INTEGRATION_SETUP = "integration_setup";

export interface IntrospectionOptions {
    url?: URL;
    clientId: string;
    clientSecret: string;
    cacheSeconds?: number;
    timeoutMs?: number;
}

export declare class InvalidBearerRequest extends TokenError {
    constructor(realm: string);
}

export declare class InvalidClient extends OAuthError {
    constructor(description?: string);
}

export declare class InvalidGrant extends OAuthError {
    constructor(description: string);
}

export declare class InvalidRequest extends OAuthError {
    constructor(description: string);
}

export declare class InvalidScope extends OAuthError {
    constructor(description: string);
}

export declare class InvalidTarget extends OAuthError {
    constructor(description?: string);
}

export declare class InvalidToken extends TokenError {
    constructor(description: string, realm: string);
}

export type KeysAuthor = 'operator' | 'tenant';

export declare class KeysUnavailable extends TokenError {
    constructor(realm: string);
}

export interface KoaLikeContext {
    get(field: string): string;
    set(field: string, value: string): void;
    status: number;
    body: unknown;
    state: object;
    method?: string;
    href?: string;
}

export type KoaLikeMiddleware = (ctx: KoaLikeContext, next: KoaLikeNext) => Promise<void>;

export type KoaLikeNext = () => Promise<unknown>;

export interface LocaleRequest {
    uiLocales?: unknown;
    acceptLanguage?: string | undefined;
    available: readonly string[];
    defaultLocale?: string;
}

export interface Logger {
    info(message: string, fields?: Record<string, unknown>): void;
    warn(message: string, fields?: Record<string, unknown>): void;
    error(message: string, fields?: Record<string, unknown>): void;
}

export declare const MAPPABLE_CLAIMS: readonly [
    "sub",
    "email",
    "email_verified",
    "name",
    "given_name",
    "family_name",
    "preferred_username",
    "locale"
];

export type MappableClaim = (typeof MAPPABLE_CLAIMS)[number];

export interface Messages {
    signInTitle: string;
    signInToProduct: (product: string) => string;
    signInContinueTo: (app: string) => string;
    usernameLabel: string;
    passwordLabel: string;
    signInButton: string;
    wrongCredentials: string;
    tooManyFailedSignIns: (seconds: number) => string;
    federationHeading: string;
    workEmailLabel: string;
    continueWith: (connection: string) => string;
    federationUsePassword: string;
    federationFailedHeading: string;
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
    secondFactorTitle: string;
    secondFactorIntro: string;
    secondFactorCodeLabel: string;
    verifyButton: string;
    wrongSecondFactorCode: string;
    malformedSecondFactorCode: string;
    usePasskeyButton: string;
    passkeyInstead: string;
    passkeySecondFactorIntro: string;
    signInWithPasskeyButton: string;
    passkeySignInIntro: string;
    passkeyNotUsed: string;
    passkeyRefused: string;
    passkeyOnlyNotAllowed: string;
    ssoRequiredIntro: (provider: string) => string;
    ssoRequiredNoPassword: string;
    consentTitle: string;
    consentHeading: (app: string) => string;
    consentRegisteredBy: (owner: string) => string;
    consentThePlatform: string;
    consentAsks: string;
    consentNotAvailable: string;
    allowButton: string;
    denyButton: string;
    enrolTitle: string;
    enrolIntro: string;
    enrolResetIntro: string;
    enrolQrLabel: string;
    enrolSecretLabel: string;
    enrolCodeLabel: string;
    enrolButton: string;
    enrolExpired: string;
    enrolWrongCode: string;
    enrolMalformedCode: string;
    recoveryCodesTitle: string;
    recoveryCodesIntro: string;
    recoveryCodesShownOnce: string;
    scopeOpenid: string;
    scopeProfile: string;
    scopeEmail: string;
    scopeOfflineAccess: string;
    scopeManagementApi: string;
    scopeManagement: string;
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
    upstreamSignOutReturnInvalid: string;
    errorTitle: string;
    errorHeading: string;
    errorReturnToApp: string;
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

export declare class MethodNotAllowed extends OAuthError {
    readonly allow: readonly string[];
    constructor(allow: readonly string[]);
    get headers(): ErrorHeaders;
}

export declare class MountedWrong extends ServerError {
}

export declare function negotiateLocale({ uiLocales, acceptLanguage, available, defaultLocale }: LocaleRequest): string;

type NextFunction = (error?: unknown) => void;

export declare class NotFound extends OAuthError {
    constructor(what: string);
}

export declare class NotSupported extends OAuthError {
    constructor(description: string);
}

export declare class OAuthError extends Error {
    readonly error: string;
    readonly status: number;
    readonly description: string;
    constructor(error: string, status: number, description: string);
    get headers(): ErrorHeaders;
    toJSON(): {
        error: string;
        error_description: string;
    };
}

export interface OperatorName {
    actor?: string;
}

export declare const optionsSchema: z.ZodObject<{
    baseUrl: z.ZodPipe<z.ZodString, z.ZodTransform<string, string>>;
    pathPrefix: z.ZodDefault<z.ZodString>;
    store: z.ZodDefault<z.ZodType<RedisStoreOption | {
        type: "memory";
    }, RedisStoreOption | {
        type: "memory";
    }, z.core.$ZodTypeInternals<RedisStoreOption | {
        type: "memory";
    }, RedisStoreOption | {
        type: "memory";
    }>>>;
    apis: z.ZodArray<z.ZodObject<{
        id: z.ZodString;
        name: z.ZodString;
        scopes: z.ZodRecord<z.ZodString, z.ZodType<string | ({
            en: string;
        } & Record<string, string>), string | ({
            en: string;
        } & Record<string, string>), z.core.$ZodTypeInternals<string | ({
            en: string;
        } & Record<string, string>), string | ({
            en: string;
        } & Record<string, string>)>>>;
        constraints: z.ZodDefault<z.ZodArray<z.ZodString>>;
    }, z.core.$strict>>;
    accounts: z.ZodOptional<z.ZodObject<{
        authenticate: z.ZodCustom<(credentials: {
            username: string;
            password: string;
        }) => Promise<import("./src/accounts.js").Account | undefined>, (credentials: {
            username: string;
            password: string;
        }) => Promise<import("./src/accounts.js").Account | undefined>>;
        findAccount: z.ZodCustom<(sub: string) => Promise<import("./src/accounts.js").Account | undefined>, (sub: string) => Promise<import("./src/accounts.js").Account | undefined>>;
        findByUsername: z.ZodOptional<z.ZodCustom<(username: string) => Promise<import("./src/accounts.js").Account | undefined>, (username: string) => Promise<import("./src/accounts.js").Account | undefined>>>;
        secondFactor: z.ZodOptional<z.ZodObject<{
            has: z.ZodCustom<(user: import("./src/accounts.js").SecondFactorUser) => boolean | Promise<boolean>, (user: import("./src/accounts.js").SecondFactorUser) => boolean | Promise<boolean>>;
            check: z.ZodCustom<(request: import("./src/accounts.js").SecondFactorUser & {
                code: string;
            }) => boolean | Promise<boolean>, (request: import("./src/accounts.js").SecondFactorUser & {
                code: string;
            }) => boolean | Promise<boolean>>;
        }, z.core.$strict>>;
        federate: z.ZodOptional<z.ZodCustom<(request: import("./src/accounts.js").FederationRequest) => Promise<import("./src/accounts.js").Account | undefined>, (request: import("./src/accounts.js").FederationRequest) => Promise<import("./src/accounts.js").Account | undefined>>>;
    }, z.core.$strip>>;
    keys: z.ZodOptional<z.ZodObject<{
        jwks: z.ZodOptional<z.ZodType<PrivateJwks, PrivateJwks, z.core.$ZodTypeInternals<PrivateJwks, PrivateJwks>>>;
        signers: z.ZodOptional<z.ZodArray<z.ZodType<ExternalSigner, ExternalSigner, z.core.$ZodTypeInternals<ExternalSigner, ExternalSigner>>>>;
        store: z.ZodOptional<z.ZodObject<{
            keks: z.ZodArray<z.ZodString>;
            publishWaitSeconds: z.ZodDefault<z.ZodNumber>;
            retireWaitSeconds: z.ZodDefault<z.ZodNumber>;
        }, z.core.$strip>>;
    }, z.core.$strip>>;
    audience: z.ZodOptional<z.ZodString>;
    accessTokenAlgorithm: z.ZodDefault<z.ZodEnum<{
        ES256: "ES256";
        RS256: "RS256";
        PS256: "PS256";
        EdDSA: "EdDSA";
    }>>;
    idTokenAlgorithms: z.ZodDefault<z.ZodArray<z.ZodEnum<{
        ES256: "ES256";
        RS256: "RS256";
        PS256: "PS256";
        EdDSA: "EdDSA";
    }>>>;
    namedUserAccessTokenTtl: z.ZodDefault<z.ZodNumber>;
    managementAccessTokenTtl: z.ZodDefault<z.ZodNumber>;
    refreshTokenReuseWindowSeconds: z.ZodDefault<z.ZodNumber>;
    grantIdleSeconds: z.ZodDefault<z.ZodNumber>;
    sessionTtl: z.ZodDefault<z.ZodNumber>;
    cookieKeys: z.ZodOptional<z.ZodArray<z.ZodString>>;
    factorKeys: z.ZodOptional<z.ZodArray<z.ZodString>>;
    limits: z.ZodPrefault<z.ZodObject<{
        tokenRequestBytes: z.ZodDefault<z.ZodNumber>;
        apiRequestBytes: z.ZodDefault<z.ZodNumber>;
        formRequestBytes: z.ZodDefault<z.ZodNumber>;
        authorizeQueryBytes: z.ZodDefault<z.ZodNumber>;
        bodyTimeoutMs: z.ZodDefault<z.ZodNumber>;
    }, z.core.$strict>>;
    rateLimits: z.ZodPrefault<z.ZodObject<{
        failedClientAuth: z.ZodPrefault<z.ZodUnion<readonly [
            z.ZodLiteral<false>,
            z.ZodObject<{
                perClient: z.ZodDefault<z.ZodObject<{
                    max: z.ZodNumber;
                    windowSeconds: z.ZodNumber;
                }, z.core.$strict>>;
                perAddress: z.ZodDefault<z.ZodObject<{
                    max: z.ZodNumber;
                    windowSeconds: z.ZodNumber;
                }, z.core.$strict>>;
            }, z.core.$strict>
        ]>>;
        authorize: z.ZodDefault<z.ZodUnion<readonly [
            z.ZodLiteral<false>,
            z.ZodObject<{
                max: z.ZodNumber;
                windowSeconds: z.ZodNumber;
            }, z.core.$strict>
        ]>>;
        failedSignIn: z.ZodPrefault<z.ZodUnion<readonly [
            z.ZodLiteral<false>,
            z.ZodObject<{
                perUsername: z.ZodDefault<z.ZodObject<{
                    max: z.ZodNumber;
                    windowSeconds: z.ZodNumber;
                }, z.core.$strict>>;
                perAddress: z.ZodDefault<z.ZodObject<{
                    max: z.ZodNumber;
                    windowSeconds: z.ZodNumber;
                }, z.core.$strict>>;
            }, z.core.$strict>
        ]>>;
        passkeySignIn: z.ZodDefault<z.ZodUnion<readonly [
            z.ZodLiteral<false>,
            z.ZodObject<{
                max: z.ZodNumber;
                windowSeconds: z.ZodNumber;
            }, z.core.$strict>
        ]>>;
    }, z.core.$strict>>;
    observability: z.ZodPrefault<z.ZodObject<{
        health: z.ZodDefault<z.ZodBoolean>;
        metrics: z.ZodDefault<z.ZodBoolean>;
        tracing: z.ZodOptional<z.ZodBoolean>;
    }, z.core.$strict>>;
    backchannelLogout: z.ZodPrefault<z.ZodObject<{
        privateHosts: z.ZodDefault<z.ZodArray<z.ZodString>>;
    }, z.core.$strict>>;
    federation: z.ZodPrefault<z.ZodObject<{
        timeoutMs: z.ZodDefault<z.ZodNumber>;
        metadataCacheSeconds: z.ZodDefault<z.ZodNumber>;
    }, z.core.$strict>>;
    proxy: z.ZodDefault<z.ZodBoolean>;
    trustedProxyHops: z.ZodDefault<z.ZodNumber>;
    tenantPolicy: z.ZodOptional<z.ZodCustom<TenantPolicyFunction, TenantPolicyFunction>>;
    tenantDisplayName: z.ZodOptional<z.ZodCustom<TenantDisplayName, TenantDisplayName>>;
    audit: z.ZodPrefault<z.ZodObject<{
        retentionDays: z.ZodDefault<z.ZodNumber>;
        maxEventsPerTenant: z.ZodDefault<z.ZodNumber>;
    }, z.core.$strict>>;
    onAuditEvent: z.ZodOptional<z.ZodCustom<import("./src/index.js").AuditHook, import("./src/index.js").AuditHook>>;
    portal: z.ZodPrefault<z.ZodObject<{
        enabled: z.ZodDefault<z.ZodBoolean>;
        path: z.ZodDefault<z.ZodString>;
        internalUrl: z.ZodOptional<z.ZodPipe<z.ZodString, z.ZodTransform<string, string>>>;
        messages: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodType<import("./src/index.js").PortalTextOverrides, import("./src/index.js").PortalTextOverrides, z.core.$ZodTypeInternals<import("./src/index.js").PortalTextOverrides, import("./src/index.js").PortalTextOverrides>>>>;
    }, z.core.$strict>>;
    i18n: z.ZodOptional<z.ZodObject<{
        messages: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodType<Partial<import("./src/index.js").Messages>, Partial<import("./src/index.js").Messages>, z.core.$ZodTypeInternals<Partial<import("./src/index.js").Messages>, Partial<import("./src/index.js").Messages>>>>>;
        defaultLocale: z.ZodOptional<z.ZodString>;
    }, z.core.$strict>>;
    branding: z.ZodOptional<z.ZodUnion<readonly [
        z.ZodCustom<(tenant: string | undefined) => import("./src/pages/branding.js").Branding | undefined | Promise<import("./src/pages/branding.js").Branding | undefined>, (tenant: string | undefined) => import("./src/pages/branding.js").Branding | undefined | Promise<import("./src/pages/branding.js").Branding | undefined>>,
        z.ZodObject<{
            productName: z.ZodOptional<z.ZodString>;
            logoUrl: z.ZodOptional<z.ZodString>;
            accentColor: z.ZodOptional<z.ZodString>;
        }, z.core.$strict>
    ]>>;
    logger: z.ZodOptional<z.ZodCustom<Logger, Logger>>;
}, z.core.$strict>;

export declare function passesConstraints(filters: DimensionFilters | undefined, valueOf: (dimension: string) => unknown): boolean;

export declare class PayloadTooLarge extends OAuthError {
    constructor(limit: number);
}

export declare const PORTAL_TEXT: {
    product: string;
    intro: string;
    signIn: string;
    signOut: string;
    signedOut: string;
    signInEnded: string;
    signInUnknown: string;
    signInDenied: string;
    signInFailed: string;
    signedInAs: (name: string, sub: string, tenant?: string) => string;
    permission: string;
    forbidden: {
        title: string;
        heading: string;
        again: string;
    };
    loadFailed: string;
    back: string;
    cancel: string;
    edit: string;
    delete: string;
    regenerate: string;
    actions: string;
    clientId: string;
    name: string;
    description: string;
    optional: string;
    required: {
        name: string;
        category: string;
        scopes: string;
        redirectUri: string;
    };
    fixErrors: (count: number) => string;
    clients: {
        heading: string;
        lead: string;
        none: string;
        create: string;
        editHeading: (name: string) => string;
        save: string;
        category: string;
        categoryHint: string;
        apis: string;
        apisHint: string;
        constraint: (dimension: string) => string;
        constraintHint: string;
        scopesColumn: string;
        created: (name: string) => string;
        saved: (name: string) => string;
        deleted: (name: string) => string;
        deleteHeading: (name: string) => string;
        deleteWarning: string;
    };
    apps: {
        heading: string;
        lead: string;
        none: string;
        create: string;
        editHeading: (name: string) => string;
        save: string;
        redirectUri: (n: number) => string;
        redirectUris: string;
        redirectHint: string;
        addRedirectUri: string;
        postLogoutUri: (n: number) => string;
        postLogoutUris: string;
        postLogoutHint: string;
        addPostLogoutUri: string;
        backchannel: string;
        backchannelHint: string;
        type: string;
        typeColumn: string;
        confidential: string;
        public: string;
        typeChangeWarning: string;
        pkce: string;
        pkceHint: string;
        noSecret: string;
        created: (name: string) => string;
        createdPublic: (name: string) => string;
        saved: (name: string) => string;
        deleted: (name: string) => string;
        deleteHeading: (name: string) => string;
        deleteWarning: string;
    };
    secret: {
        title: string;
        createdHeading: (name: string) => string;
        newHeading: (name: string) => string;
        created: (what: string) => string;
        regenerated: (what: string) => string;
        label: string;
        copy: string;
        copied: string;
        copyFailed: string;
        once: string;
        onceMore: string;
        regenerateHeading: (name: string) => string;
        regenerateWarning: string;
        what: {
            client_configuration: string;
            app_registration: string;
        };
    };
    clientAuth: {
        heading: string;
        lead: string;
        appOnly: string;
        secret: string;
        privateKeyJwt: string;
        jwks: string;
        jwksHint: string;
        jwksUri: string;
        jwksUriHint: string;
        notJson: string;
        currentSecret: string;
        currentPublic: string;
        currentKeys: string;
        key: (kid: string, alg: string) => string;
        keyWithoutId: (alg: string) => string;
        keysAt: string;
        dpop: string;
        dpopHint: string;
        dpopOptional: string;
        dpopRequired: string;
        par: string;
        parHint: string;
        weakenNote: string;
        noSecret: string;
        fromKeys: (what: string) => string;
        methods: Record<string, string>;
        methodChanged: (from: string, to: string) => string;
        method: (method: string) => string;
        dpopRules: Record<string, string>;
        dpopRule: (rule: string) => string;
        noSecretToRotate: (name: string) => string;
        profile: string;
        profileHint: string;
        profileHintApp: string;
        profileStandard: string;
        profileHigh: string;
        profileNow: string;
        profileByTenant: string;
        tenantProfileHeading: string;
        tenantProfileLegend: string;
        tenantProfiles: Record<string, string>;
        tenantProfileHint: string;
        tenantProfileByHost: string;
        tenantProfileSave: string;
        tenantProfilePick: string;
        tenantProfileSaved: Record<string, string>;
        tenantProfileRefused: (clients: string) => string;
    };
    platformApps: {
        heading: string;
        lead: string;
        none: string;
        registeredBy: string;
        platform: string;
        anotherOrganisation: string;
        firstParty: string;
    };
    unlock: {
        heading: string;
        lead: string;
        link: string;
        title: string;
        username: string;
        usernameHint: string;
        button: string;
        unlocked: (username: string) => string;
        notHeld: (username: string) => string;
        required: string;
    };
    consents: {
        heading: string;
        lead: string;
        none: string;
        loadFailed: string;
        app: string;
        may: string;
        since: string;
        revoke: string;
        revokeLabel: (name: string) => string;
        deletedApp: string;
        revoked: (name: string) => string;
        revokedPortal: (name: string) => string;
    };
    activity: {
        actors: Record<string, string>;
        heading: string;
        lead: string;
        none: string;
        all: string;
        when: string;
        what: string;
        who: string;
        target: string;
        details: string;
        from: string;
        type: string;
        anyType: string;
        since: string;
        until: string;
        dateHint: string;
        badDate: (label: string) => string;
        badRange: string;
        filter: string;
        older: string;
        newest: string;
        types: Record<string, string>;
        kinds: Record<string, string>;
        gone: (kind: string, id: string) => string;
        goneNamed: (kind: string, name: string, id: string) => string;
        reasons: Record<string, string>;
        detail: {
            fields: (fields: string) => string;
            scopes: (scopes: string) => string;
            reason: (reason: string) => string;
            user: (user: string) => string;
            failures: (count: number) => string;
            refused: (method: string, status: string, error: string) => string;
            count: (count: number) => string;
            grantEnded: string;
            name: (name: string) => string;
            category: (category: string) => string;
            apis: (apis: string) => string;
            clientType: (type: string) => string;
            redirectUris: (uris: string) => string;
            builtIn: string;
            alg: (alg: string) => string;
        };
    };
    nav: {
        label: string;
        home: string;
        security: string;
    };
    security: {
        title: string;
        lead: string;
        none: string;
        resetRequested: string;
        added: (date: string) => string;
        gone: string;
    };
    securityApp: {
        heading: string;
        lead: string;
        none: string;
        set: string;
        start: string;
        reset: string;
        remove: string;
        setupTitle: string;
        scan: string;
        qrLabel: string;
        key: string;
        code: string;
        codeHint: string;
        confirm: string;
        expires: (time: string) => string;
        replaces: string;
        added: string;
        wrong: string;
        malformed: string;
        expired: string;
        startAgain: string;
        removed: string;
    };
    securityPasskeys: {
        heading: string;
        lead: string;
        none: string;
        add: string;
        addTitle: string;
        name: string;
        nameHint: string;
        create: string;
        failed: string;
        needsScript: string;
        added: (name: string) => string;
        refused: string;
        duplicate: string;
        nameRequired: string;
        synced: string;
        device: string;
        removeButton: string;
        remove: (name: string) => string;
        removed: string;
        nameColumn: string;
        addedColumn: string;
        kindColumn: string;
        actionColumn: string;
    };
    securityRecovery: {
        heading: string;
        lead: string;
        none: string;
        remaining: (count: number) => string;
        create: string;
        renew: string;
        renewWarning: string;
        title: string;
        once: string;
        done: string;
        remove: string;
        removed: string;
    };
    reauth: {
        title: string;
        lead: (minutes: number) => string;
        then: string;
        button: string;
        notDone: string;
    };
    connections: {
        heading: string;
        lead: string;
        link: string;
        back: string;
        none: string;
        create: string;
        editHeading: (name: string) => string;
        save: string;
        issuer: string;
        issuerHint: string;
        nameHint: string;
        clientIdHint: string;
        secret: string;
        secretHint: string;
        secretReplaceHint: string;
        secretAddHint: string;
        secretKept: string;
        noSecret: string;
        removeSecret: string;
        method: string;
        methods: {
            client_secret_basic: string;
            client_secret_post: string;
            private_key_jwt: string;
        };
        domains: string;
        domainsHint: string;
        noDomains: string;
        scopes: string;
        scopesHint: string;
        claims: string;
        claimsHint: string;
        badClaim: (line: string) => string;
        signOutUpstream: string;
        redirectUri: string;
        redirectUriHint: string;
        redirectUriOf: (name: string) => string;
        redirectUriLater: string;
        setupHeading: string;
        setupSteps: string;
        required: {
            name: string;
            issuer: string;
            clientId: string;
        };
        created: (name: string, redirectUri: string) => string;
        saved: (name: string) => string;
        deleted: (name: string) => string;
        deleteHeading: (name: string) => string;
        deleteWarning: string;
        ssoHeading: string;
        ssoLegend: string;
        sso: {
            optional: string;
            required: string;
        };
        ssoHint: {
            optional: string;
            required: string;
        };
        ssoRequiredByHost: string;
        ssoSave: string;
        ssoPick: string;
        ssoSaved: {
            optional: string;
            required: string;
        };
    };
    errors: {
        refused: string;
        tooLarge: string;
        notFound: string;
        gone: string;
        failed: string;
        unavailable: string;
        notAllowed: string;
    };
};

export type PortalText = typeof PORTAL_TEXT;

export type PortalTextOverrides = {
    [K in keyof PortalText]?: PortalText[K] extends (...args: never[]) => unknown ? PortalText[K] : PortalText[K] extends object ? Partial<PortalText[K]> : PortalText[K];
};

export interface PrivateJwks {
    keys: JWK[];
}

export declare function recentSignInSeconds(minutes: number): number;

export declare const REDACTED_FIELDS: readonly string[];

export type RedisClusterSettings = z.input<typeof clusterSettings>;

export type RedisConnectionOptions = RedisSharedSettings & ({
    url: string;
    cluster?: never;
    sentinel?: never;
} | {
    cluster: RedisClusterSettings;
    url?: never;
    sentinel?: never;
} | {
    sentinel: RedisSentinelSettings;
    url?: never;
    cluster?: never;
});

export type RedisSentinelSettings = z.input<typeof sentinelSettings>;

export type RedisSharedSettings = z.input<typeof sharedSettings>;

export type RedisStoreOption = {
    type: 'redis';
} & Pick<z.input<typeof redisStoreSchema>, 'keyPrefix' | 'commandTimeoutMs'> & RedisConnectionOptions;

export declare const redisStoreSchema: z.ZodObject<{
    keyPrefix: z.ZodOptional<z.ZodString>;
    commandTimeoutMs: z.ZodOptional<z.ZodNumber>;
    username: z.ZodOptional<z.ZodString>;
    password: z.ZodOptional<z.ZodString>;
    tls: z.ZodOptional<z.ZodUnion<readonly [
        z.ZodBoolean,
        z.ZodObject<{
            ca: z.ZodOptional<z.ZodString>;
            cert: z.ZodOptional<z.ZodString>;
            key: z.ZodOptional<z.ZodString>;
            servername: z.ZodOptional<z.ZodString>;
            rejectUnauthorized: z.ZodOptional<z.ZodBoolean>;
        }, z.core.$strict>
    ]>>;
    type: z.ZodLiteral<"redis">;
    url: z.ZodOptional<z.ZodString>;
    cluster: z.ZodOptional<z.ZodObject<{
        nodes: z.ZodArray<z.ZodString>;
    }, z.core.$strict>>;
    sentinel: z.ZodOptional<z.ZodObject<{
        sentinels: z.ZodArray<z.ZodObject<{
            host: z.ZodString;
            port: z.ZodNumber;
        }, z.core.$strict>>;
        name: z.ZodString;
        username: z.ZodOptional<z.ZodString>;
        password: z.ZodOptional<z.ZodString>;
    }, z.core.$strict>>;
}, z.core.$strict>;

export declare const REGISTERED_METHODS: readonly [
    "face",
    "fpt",
    "geo",
    "hwk",
    "iris",
    "kba",
    "mca",
    "mfa",
    "otp",
    "pin",
    "pwd",
    "rba",
    "retina",
    "sc",
    "sms",
    "swk",
    "tel",
    "user",
    "vbm",
    "wia"
];

export type RegisteredMethod = (typeof REGISTERED_METHODS)[number];

export declare class RequestTimeout extends OAuthError {
    constructor(seconds: number);
}

export declare function requireRecentSignIn(verifier: TokenVerifier, minutes: number): KoaLikeMiddleware;

export declare function requireScopes(verifier: TokenVerifier, ...scopes: string[]): KoaLikeMiddleware;

export declare function requireSecondFactor(verifier: TokenVerifier): KoaLikeMiddleware;

export declare function requireTenant<C extends KoaLikeContext>(verifier: TokenVerifier, tenantOf: (ctx: C) => string | undefined): KoaLikeMiddleware;

export type Resources = Record<string, {
    scopes: string[];
    constraints?: DimensionFilters;
}>;

export declare const SECOND_FACTOR_RULES: readonly [
    "optional",
    "required_for_permissions",
    "required"
];

export type SecondFactorRule = (typeof SECOND_FACTOR_RULES)[number];

export interface SecondFactorUser {
    tenant: string;
    sub: string;
}

export declare const SECURITY_PROFILES: readonly [
    "standard",
    "high-security"
];

export type SecurityProfile = (typeof SECURITY_PROFILES)[number];

declare const sentinelSettings: z.ZodObject<{
    sentinels: z.ZodArray<z.ZodObject<{
        host: z.ZodString;
        port: z.ZodNumber;
    }, z.core.$strict>>;
    name: z.ZodString;
    username: z.ZodOptional<z.ZodString>;
    password: z.ZodOptional<z.ZodString>;
}, z.core.$strict>;

export declare class ServerError extends OAuthError {
    constructor(description?: string);
}

declare const sharedSettings: z.ZodObject<{
    username: z.ZodOptional<z.ZodString>;
    password: z.ZodOptional<z.ZodString>;
    tls: z.ZodOptional<z.ZodUnion<readonly [
        z.ZodBoolean,
        z.ZodObject<{
            ca: z.ZodOptional<z.ZodString>;
            cert: z.ZodOptional<z.ZodString>;
            key: z.ZodOptional<z.ZodString>;
            servername: z.ZodOptional<z.ZodString>;
            rejectUnauthorized: z.ZodOptional<z.ZodBoolean>;
        }, z.core.$strict>
    ]>>;
}, z.core.$strip>;

export type SigningAlgorithm = 'ES256' | 'RS256' | 'PS256' | 'EdDSA';

export interface SignInsApi {
    unlock(request: SignInUnlockRequest & OperatorName): Promise<SignInUnlockResult>;
}

export interface SignInUnlockRequest {
    tenant?: string;
    username: string;
}

export interface SignInUnlockResult {
    unlocked: boolean;
}

export declare const SSO_RULES: readonly [
    "optional",
    "required"
];

export type SsoRule = (typeof SSO_RULES)[number];

export declare class StoreFormatError extends StoreStartError {
    readonly found: string;
    readonly supported: number;
    constructor(message: string, found: string);
}

export declare class StoreStartError extends Error {
    constructor(message: string);
}

export declare class TemporarilyUnavailable extends OAuthError {
    constructor(description?: string);
    get headers(): ErrorHeaders;
}

export type TenantDisplayName = (tenant: string) => string | undefined | Promise<string | undefined>;

export declare class TenantMoved extends TokenError {
    constructor(realm: string);
}

export interface TenantPolicy {
    allowedApps?: readonly string[];
    allowedScopes?: readonly string[];
    accessTokenTtl?: number;
    secondFactor?: SecondFactorRule;
    passkeyOnlySignIn?: boolean;
    sso?: SsoRule;
    profile?: SecurityProfile;
}

export type TenantPolicyFunction = (tenant: string) => TenantPolicy | undefined | Promise<TenantPolicy | undefined>;

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'private_key_jwt';

export declare class TokenError extends OAuthError {
    readonly challenge: string;
    constructor(error: string, status: number, description: string, realm: string, extra?: string);
    get headers(): ErrorHeaders;
    static missing(realm: string): TokenError;
}

export declare class TokenStatusUnavailable extends TokenError {
    constructor(realm: string);
}

export interface TokenVerifier {
    verify(token: string): Promise<AccessTokenContext>;
    verifyAuthorization(header: string | undefined): Promise<AccessTokenContext>;
    verifyRequest(request: AuthorizedRequest): Promise<AccessTokenContext>;
    readonly realm: string;
    dpopNonce?(): string | undefined;
}

export interface TokenVerifierOptions {
    issuer: string;
    audience: string;
    jwks: JSONWebKeySet | URL;
    algorithms?: string[];
    clockToleranceSeconds?: number;
    jwksCooldownSeconds?: number;
    jwksCacheMaxAgeSeconds?: number;
    realm?: string;
    introspection?: IntrospectionOptions;
    dpop?: boolean | {
        maxProofs?: number;
        nonce?: boolean | DpopNonceOptions;
        origin?: string;
    };
}

export declare class TooManyRequests extends OAuthError {
    readonly retryAfter: number;
    constructor(retryAfter: number, description?: string);
    get headers(): ErrorHeaders;
}

export interface TotpEnrolment {
    factorId: string;
    secret: string;
    otpauthUri: string;
}

export declare class UnauthorizedClient extends OAuthError {
    constructor(description?: string);
}

export declare class UnmetAuthenticationRequirements extends OAuthError {
    constructor(description?: string);
}

export declare class UnsupportedGrantType extends OAuthError {
    constructor(description?: string);
}

export declare class UnsupportedMediaType extends OAuthError {
    constructor(description: string);
}

export declare const UPSTREAM_AUTH_METHODS: readonly [
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt"
];

export type UpstreamAuthMethod = (typeof UPSTREAM_AUTH_METHODS)[number];

export interface UserAuthenticationNeeded {
    acrValues?: string;
    maxAge?: number;
}

export interface UsersApi {
    signOut(request: UserSignOutRequest & OperatorName): Promise<UserSignOutResult>;
}

export interface UserSignOutRequest {
    tenant: string;
    sub: string;
}

export interface UserSignOutResult {
    grantsEnded: number;
}

export declare class ValidationError extends OAuthError {
    readonly field: string;
    constructor(field: string, message: string);
}
