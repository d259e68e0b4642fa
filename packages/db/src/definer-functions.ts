import { resolveSessionDefiner } from "./admin-sessions.ts";
import { enterAsApiTokenDefiner, resolveTokenDefiner } from "./api-tokens.ts";
import { adminAuditDefiner } from "./audit.ts";
import {
  adminApiTokensDefiner,
  adminRevokeTokenDefiner,
  memberOverviewDefiner,
} from "./console.ts";
import type { DefinerFunction } from "./definer.ts";
import { signInRecordDefiner } from "./grant-records.ts";
import { withheldDefiner } from "./matters.ts";
import {
  ensureVectorIndexDefiner,
  fulltextCandidatesDefiner,
  purgeMemoriesDefiner,
  setEmbeddingDefiner,
  toEmbedDefiner,
  vectorCandidatesDefiner,
} from "./memories/definers.ts";
import {
  enterAsOAuthGrantDefiner,
  memberForUserDefiner,
  resolveGrantDefiner,
  signInMemberDefiner,
} from "./sign-in.ts";
import { ssoForDomainDefiner, ssoForOrganizationDefiner } from "./sso.ts";
import { adminProfilesDefiner } from "./working-profile.ts";

/**
 * Every SECURITY DEFINER function provisioning owns (SPEC §6), gathered from the domains that
 * declare them beside their stores (decision 003), in the order `north provision` re-creates
 * them. A function declared and not listed here would never be installed: `definer.test.ts`
 * holds this list equal to every `definerFunction` the package declares.
 */
export const DEFINER_FUNCTIONS: readonly DefinerFunction[] = [
  adminProfilesDefiner,
  resolveTokenDefiner,
  enterAsApiTokenDefiner,
  purgeMemoriesDefiner,
  adminAuditDefiner,
  resolveSessionDefiner,
  ssoForDomainDefiner,
  ssoForOrganizationDefiner,
  signInMemberDefiner,
  memberForUserDefiner,
  resolveGrantDefiner,
  enterAsOAuthGrantDefiner,
  signInRecordDefiner,
  toEmbedDefiner,
  setEmbeddingDefiner,
  fulltextCandidatesDefiner,
  ensureVectorIndexDefiner,
  vectorCandidatesDefiner,
  memberOverviewDefiner,
  adminApiTokensDefiner,
  adminRevokeTokenDefiner,
  withheldDefiner,
];
