export { adminSessions } from "./admin-sessions.ts";
export { apiTokens } from "./api-tokens.ts";
export { AUDIT_OUTCOMES, type AuditOutcome, auditEvents } from "./audit.ts";
export {
  MATTER_ACCESS,
  MATTER_REFERENCE_PATTERN,
  type MatterAccess,
  matterScreens,
  matters,
  matterTeam,
} from "./matters.ts";
export { MEMBER_ROLES, type MemberRole, members } from "./members.ts";
export { MAY_SEE_MATTER_SQL, memories } from "./memories.ts";
export {
  ORGANIZATION_LANGUAGES,
  type OrganizationLanguage,
  organizations,
} from "./organizations.ts";
export { appRole } from "./roles.ts";
export { memberIdentities, ssoConnections, ssoDomains } from "./sign-in.ts";
export {
  CURRENT_ORGANIZATION_ID_SQL,
  CURRENT_USER_ID_SQL,
  currentOrganizationId,
  currentUserId,
  TENANT_ORGANIZATION_SETTING,
  TENANT_USER_SETTING,
} from "./tenant-settings.ts";
export { workingProfileAnswers } from "./working-profile.ts";
