export { createAuthServer, type AuthServer, type ConsentsApi, type SignInsApi, type FactorsApi, type ConnectionsApi, type UsersApi, type OperatorName, type BackupApi } from './server.js';
export { BACKUP_DOCUMENT, BACKUP_FORMAT, BACKUP_VERSION, type BackupDocument, type BackupExportOptions, type BackupImportOptions, type BackupImportResult, type BackupImportCounts, type BackupKind } from './records/backup.js';
export type { UserSignOutRequest, UserSignOutResult } from './records/user-sign-out.js';
export type { Connection, ConnectionInput, ConnectionPatch, ClaimMapping, MappableClaim, UpstreamAuthMethod } from './federation/connections.js';
export type { SignInUnlockRequest, SignInUnlockResult } from './limits/sign-in.js';
export type { ConnectMiddleware } from './http/embedding.js';
export type { ClientConfigurations } from './records/client-configurations.js';
export type { AppRegistrations } from './records/app-registrations.js';
export type { Consent, ConsentKey } from './records/consents.js';
export type { FactorListEntry, FactorOwner, FactorSummary, TotpEnrolment } from './factors/index.js';
export { StoreStartError, StoreFormatError } from '../adapters/redis/index.js';
export type { AuthServerOptions, ApiDefinitionInput } from './options.js';
export type { ExternalSigner } from './engine/signing-keys.js';
export type { Messages } from './i18n/messages/en.js';
export type { I18nOptions } from './i18n/localizer.js';
export { negotiateLocale, type LocaleRequest } from './i18n/locale.js';
export type { Branding, BrandingOption } from './pages/branding.js';
export type { PortalText, PortalTextOverrides } from './portal/text.js';
export type { Account, AccountStore, FederatedClaims, FederationRequest, HostSecondFactor, SecondFactorUser } from './accounts.js';
export { INTEGRATION_SETUP } from './accounts.js';
export type { ApiDefinition } from '../policies/catalog.js';
export type { Logger } from './logger.js';
export type { SigningAlgorithm, PrivateJwks } from './engine/keys.js';
export type {
  ClientConfiguration,
  ClientConfigurationInput,
  ClientConfigurationPatch,
  DpopRule,
  Resources,
} from './records/client-configurations.js';
export type {
  AppRegistration,
  AppRegistrationInput,
  AppRegistrationPatch,
  ClientType,
  IdTokenAlgorithm,
} from './records/app-registrations.js';
export type { Constraints, DimensionFilters } from '../policies/constraints.js';
export {
  OAuthError,
  InvalidRequest,
  InvalidClient,
  InvalidGrant,
  UnauthorizedClient,
  AccessDenied,
  UnsupportedGrantType,
  InvalidScope,
  InvalidTarget,
  ValidationError,
  NotFound,
  MethodNotAllowed,
  RequestTimeout,
  Conflict,
  PayloadTooLarge,
  UnsupportedMediaType,
  TooManyRequests,
  NotSupported,
  ServerError,
  BodyConsumedByHost,
  MountedWrong,
  TemporarilyUnavailable,
  InvalidToken,
  InsufficientScope,
  InsufficientUserAuthentication,
  UnmetAuthenticationRequirements,
  type UserAuthenticationNeeded,
  TenantMoved,
  InvalidBearerRequest,
  KeysUnavailable,
  TokenStatusUnavailable,
  type ErrorHeaders,
} from '../policies/errors.js';
export * from './resource-server/index.js';
export type { AuthenticationMethod } from '../policies/authentication-context.js';
export type { TenantPolicy, TenantPolicyFunction } from '../policies/tenant-policy.js';
export {
  AUDIT_EVENT_TYPES,
  type AuditActor,
  type AuditEvent,
  type AuditEventPage,
  type AuditEventType,
  type AuditHook,
  type AuditQuery,
  type AuditTarget,
} from './audit/trail.js';
export { createLogger, fromPino, REDACTED_FIELDS } from './logger.js';
