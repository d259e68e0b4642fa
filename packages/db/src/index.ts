export {
  endAdminSession,
  hashSessionId,
  type OpenedSession,
  type OpenSessionParams,
  openAdminSession,
  RESOLVE_SESSION_FUNCTION,
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
  RESOLVE_TOKEN_FUNCTION,
  type ResolvedToken,
  resolveApiToken,
  revokeApiToken,
  TOKEN_PREFIX,
} from "./api-tokens.ts";
export {
  type AdminAuditEvent,
  AUDIT_ADMIN_FUNCTION,
  type AuditCursor,
  type AuditEvent,
  type AuditFilters,
  type AuditPage,
  type AuditQuery,
  auditStatement,
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
  API_TOKENS_ADMIN_FUNCTION,
  isLiveToken,
  listApiTokensForAdmin,
  type ManagerRequest,
  MEMBER_OVERVIEW_FUNCTION,
  type MemberOverview,
  REVOKE_TOKEN_ADMIN_FUNCTION,
  readMemberOverview,
  revokeApiTokenForAdmin,
} from "./console.ts";
export { MAINTENANCE_ROLE } from "./definer.ts";
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
  currentGrantId,
  endBrowserSession,
  endMemberOAuth,
  grantRecordFor,
  grantStartedAt,
  recordSignInSession,
  replaceGrant,
  type SignInRecord,
  sameSignIn,
  signInRecordFor,
} from "./grant-records.ts";
export {
  type FoundGrant,
  findGrant,
  type GrantSummary,
  listGrants,
  type RevokedGrant,
  revokeClientAccess,
  revokeGrant,
} from "./grants.ts";
export {
  type MatterMemoryRow,
  type MemberMatters,
  matterMemories,
  memberMatters,
} from "./matter-console.ts";
export { membersByEmail, replaceScreens, replaceTeam, updateMatter } from "./matter-import.ts";
export {
  addScreen,
  addToTeam,
  createMatter,
  findMatter,
  holdMatter,
  isMatterReference,
  listMatters,
  type MatterDetail,
  type MatterRow,
  type MatterSummary,
  type MembershipChange,
  matterDetail,
  matterFieldProblem,
  matterReferences,
  memoriesWithheld,
  releaseMatter,
  removeFromTeam,
  removeScreen,
  visibleMatter,
} from "./matters.ts";
export { PURGE_FUNCTION } from "./memories/definers.ts";
export {
  memoriesToEmbed,
  setMemoryEmbedding,
} from "./memories/embeddings.ts";
export {
  type ForgetResult,
  type ForgetTarget,
  forgetMemories,
  type HeldMemory,
  memoriesHeld,
  othersMemoriesMatching,
} from "./memories/erasure.ts";
export {
  purgeExpiredMemories,
  type ReclaimResult,
  reclaimErasedSpace,
  rekeySubjectFingerprints,
} from "./memories/maintenance.ts";
export {
  type RecalledMemory,
  type RecallMode,
  type RecallParams,
  recallMemories,
  VECTOR_CANDIDATES,
} from "./memories/recall.ts";
export {
  MAX_SUPERSEDES,
  type RememberParams,
  type RememberResult,
  rememberMemory,
  type SubjectFingerprinter,
} from "./memories/remember.ts";
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
export {
  describeError,
  hasSqlState,
  isCredentialRefused,
  isDatabaseUnavailable,
} from "./pg-errors.ts";
export { finishWith, type RawStatement } from "./pipelined-transaction.ts";
export {
  MAINTENANCE_LOGIN_DEFAULT,
  PROVISIONED_TABLES,
  type ProvisionOptions,
  provisionDatabase,
} from "./provision.ts";
export * as authorizationServerTables from "./schema/authorization-server.ts";
export {
  AUDIT_OUTCOMES,
  type AuditOutcome,
  adminSessions,
  apiTokens,
  auditEvents,
  MATTER_ACCESS,
  type MatterAccess,
  MEMBER_ROLES,
  type MemberRole,
  matterScreens,
  matters,
  matterTeam,
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
  ensureAuthorizationServerUser,
  memberEmail,
  organizationName,
  type ResolvedGrant,
  resolveOAuthGrant,
  type SignInMatch,
  type SignInOutcome,
  signInMember,
} from "./sign-in.ts";
export {
  DomainTakenError,
  getSsoConnection,
  removeSsoConnection,
  type SetSsoParams,
  type SsoConnection,
  type SsoSummary,
  setSsoConnection,
  ssoConnectionForDomain,
  ssoConnectionForOrganization,
} from "./sso.ts";
export {
  type ApiTokenProof,
  enterStatement,
  type GrantProof,
  type Tenant,
  type TenantProof,
  withOrganization,
  withTenant,
} from "./tenant.ts";
export {
  ensureVectorIndex,
  prepareVectorSearch,
  VECTOR_INDEX_INLINE_LIMIT,
  type VectorIndexOutcome,
  type VectorSearchReport,
} from "./vector-search.ts";
export {
  ADMIN_FUNCTION,
  type AdminProfileEntry,
  type AdminProfilesResult,
  type ProfileEntry,
  readOwnProfile,
  readProfile,
  readProfilesForAdmin,
  type SaveAnswerParams,
  type SaveAnswerResult,
  saveAnswer,
} from "./working-profile.ts";
