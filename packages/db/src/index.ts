export {
  endAdminSession,
  hashSessionId,
  type OpenedSession,
  type OpenSessionParams,
  openAdminSession,
  type ResolvedSession,
  resolveAdminSession,
} from "./admin-sessions.ts";
export {
  apiTokenHolder,
  type CreatedToken,
  type CreateTokenParams,
  createApiToken,
  hashToken,
  listApiTokens,
  mintToken,
  type ResolvedToken,
  resolveApiToken,
  revokeApiToken,
  TOKEN_PREFIX,
} from "./api-tokens.ts";
export {
  type AdminAuditEvent,
  type AuditCursor,
  type AuditEvent,
  type AuditFilters,
  type AuditPage,
  type AuditQuery,
  createFingerprinter,
  readAuditForAdmin,
  readAuditPageForAdmin,
  recordAudit,
  type TargetFingerprint,
} from "./audit.ts";
export {
  type ConnectOptions,
  connectDatabase,
  type Database,
  type DatabaseHandle,
  type Tx,
} from "./client.ts";
export {
  type AdminApiToken,
  isLiveToken,
  listApiTokensForAdmin,
  type ManagerRequest,
  type MemberOverview,
  readMemberOverview,
  revokeApiTokenForAdmin,
} from "./console.ts";
export {
  ADMIN_FUNCTION,
  API_TOKENS_ADMIN_FUNCTION,
  AUDIT_ADMIN_FUNCTION,
  MAINTENANCE_ROLE,
  MEMBER_OVERVIEW_FUNCTION,
  PURGE_FUNCTION,
  RESOLVE_SESSION_FUNCTION,
  RESOLVE_TOKEN_FUNCTION,
  REVOKE_TOKEN_ADMIN_FUNCTION,
} from "./definer-functions.ts";
export {
  type AddMemberParams,
  addMember,
  createOrganization,
  findMemberRole,
  listMembers,
  listOrganizations,
  type MemberChange,
  organizationExists,
  removeMember,
  setMemberRole,
  setOrganizationLanguage,
} from "./directory.ts";
export { normalizedEmailSql, normalizeEmail } from "./email.ts";
export { exportMembers, type MemberExport } from "./export.ts";
export { freePort } from "./free-port.ts";
export {
  clipRefreshTokens,
  endBrowserSession,
  endMemberOAuth,
  openGrant,
  recordSignInSession,
  type SignInRecord,
  signInRecordFor,
} from "./grant-records.ts";
export {
  type ForgetResult,
  type ForgetTarget,
  forgetMemories,
  type HeldMemory,
  MAX_SUPERSEDES,
  memoriesHeld,
  memoriesToEmbed,
  othersMemoriesMatching,
  purgeExpiredMemories,
  type RecalledMemory,
  type RecallMode,
  type RecallParams,
  type ReclaimResult,
  type RememberParams,
  type RememberResult,
  recallMemories,
  reclaimErasedSpace,
  rekeySubjectFingerprints,
  rememberMemory,
  type SubjectFingerprinter,
  setMemoryEmbedding,
  VECTOR_CANDIDATES,
} from "./memories.ts";
export {
  type HeldSubject,
  listHeldSubjects,
  type MemoryReview,
  type MemoryState,
  type ReviewedMemory,
  type ReviewScope,
  reviewMemories,
  summarizeMemoriesWithoutSubject,
  type UnsubjectedSummary,
} from "./memory-console.ts";
export { MIGRATIONS_FOLDER, migrateDatabase } from "./migrate.ts";
export { describeError, hasSqlState, isDatabaseUnavailable } from "./pg-errors.ts";
export {
  MAINTENANCE_LOGIN_DEFAULT,
  PROVISIONED_TABLES,
  type ProvisionOptions,
  provisionDatabase,
} from "./provision.ts";
export * as authorizationServerTables from "./schema/authorization-server.ts";
export { oauthGrants, signInSessions } from "./schema/grant-records.ts";
export {
  AUDIT_OUTCOMES,
  type AuditOutcome,
  adminSessions,
  apiTokens,
  auditEvents,
  MEMBER_ROLES,
  type MemberRole,
  members,
  memories,
  ORGANIZATION_LANGUAGES,
  type OrganizationLanguage,
  organizations,
  TENANT_ORGANIZATION_SETTING,
  TENANT_USER_SETTING,
  workingProfileAnswers,
} from "./schema/index.ts";
export {
  type ActiveMember,
  activeMemberForUser,
  DomainTakenError,
  ensureAuthorizationServerUser,
  type FoundGrant,
  findGrant,
  type GrantSummary,
  getSsoConnection,
  listGrants,
  organizationName,
  type ResolvedGrant,
  type RevokedGrant,
  removeSsoConnection,
  resolveOAuthGrant,
  revokeClientAccess,
  revokeGrant,
  type SetSsoParams,
  type SignInMatch,
  type SignInOutcome,
  type SsoConnection,
  type SsoSummary,
  setSsoConnection,
  signInMember,
  ssoConnectionForDomain,
  ssoConnectionForOrganization,
} from "./sign-in.ts";
export { type Tenant, withOrganization, withTenant } from "./tenant.ts";
export {
  ensureVectorIndex,
  prepareVectorSearch,
  VECTOR_INDEX_INLINE_LIMIT,
  type VectorIndexOutcome,
  type VectorSearchReport,
} from "./vector-search.ts";
export {
  type AdminProfileEntry,
  type AdminProfilesResult,
  type ProfileEntry,
  readProfile,
  readProfilesForAdmin,
  type SaveAnswerParams,
  type SaveAnswerResult,
  saveAnswer,
} from "./working-profile.ts";
