import { sql } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { definerFunction, MANAGER_GUARD } from "./definer.ts";
import { callManagerOnly } from "./manager-only.ts";
import type { MemberRole } from "./schema/index.ts";

/**
 * What the console's Members section reads and changes beyond what the app role may touch
 * itself: other members' onboarding and every member's API tokens, through the manager-only
 * SECURITY DEFINER functions of definer-functions.ts. Each returns `{ ok: false }` when the
 * requester is not a manager of the tenant's organisation (the function raised 42501 inside a
 * savepoint, so the caller's transaction and its audit row carry on).
 */

/** A member as the manager sees them: who, their role, and how far they have onboarded. */
export interface MemberOverview {
  userId: string;
  email: string;
  role: MemberRole;
  createdAt: Date;
  removedAt: Date | null;
  /** Working-profile answers saved; 0 means the member has not onboarded. */
  answers: number;
  /** The newest answer's last update, or null with no answers. */
  lastAnswerAt: Date | null;
}

/** An API token as the console shows it: never its hash. */
export interface AdminApiToken {
  id: string;
  userId: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface ManagerRequest {
  organizationId: string;
  requesterId: string;
}

const toDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));
const date = (value: unknown) => (value === null || value === undefined ? null : toDate(value));

/**
 * Every member of the organisation (removed ones too), ordered by email, with their answer
 * count and newest update, through `member_overview_for_admin`.
 */
export async function readMemberOverview(
  tx: Tx,
  params: ManagerRequest,
): Promise<{ ok: true; members: MemberOverview[] } | { ok: false }> {
  const rows = await callManagerOnly(
    tx,
    sql`select * from public.member_overview_for_admin(${params.organizationId}::uuid, ${params.requesterId}::uuid)`,
  );
  if (!rows) return { ok: false };
  return {
    ok: true,
    members: rows.map((r) => ({
      userId: String(r.user_id),
      email: String(r.email),
      role: r.role as MemberRole,
      createdAt: toDate(r.created_at),
      removedAt: date(r.removed_at),
      answers: Number(r.answers),
      lastAnswerAt: date(r.last_answer_at),
    })),
  };
}

/**
 * One member's API tokens, newest first, or every member's when `userId` is left out, through
 * `api_tokens_for_admin`. Revoked and expired tokens are included; see {@link isLiveToken}.
 */
export async function listApiTokensForAdmin(
  tx: Tx,
  params: ManagerRequest & { userId?: string },
): Promise<{ ok: true; tokens: AdminApiToken[] } | { ok: false }> {
  const rows = await callManagerOnly(
    tx,
    sql`select * from public.api_tokens_for_admin(${params.organizationId}::uuid, ${params.requesterId}::uuid, ${params.userId ?? null}::uuid)`,
  );
  if (!rows) return { ok: false };
  return {
    ok: true,
    tokens: rows.map((r) => ({
      id: String(r.id),
      userId: String(r.user_id),
      scopes: r.scopes as string[],
      createdAt: toDate(r.created_at),
      expiresAt: date(r.expires_at),
      lastUsedAt: date(r.last_used_at),
      revokedAt: date(r.revoked_at),
    })),
  };
}

/** Whether a token still opens anything: neither revoked nor past its expiry. */
export function isLiveToken(token: AdminApiToken, now = new Date()): boolean {
  return token.revokedAt === null && (token.expiresAt === null || token.expiresAt > now);
}

/**
 * Revokes one live token of the organisation through `revoke_api_token_for_admin`; `revoked` is
 * false when there is no such live token there (unknown, another organisation's, already revoked
 * or expired).
 */
export async function revokeApiTokenForAdmin(
  tx: Tx,
  params: ManagerRequest & { tokenId: string },
): Promise<{ ok: true; revoked: boolean } | { ok: false }> {
  const rows = await callManagerOnly<{ revoked: boolean }>(
    tx,
    sql`select public.revoke_api_token_for_admin(${params.organizationId}::uuid, ${params.requesterId}::uuid, ${params.tokenId}::uuid) as revoked`,
  );
  if (!rows) return { ok: false };
  return { ok: true, revoked: rows[0]?.revoked === true };
}

export const MEMBER_OVERVIEW_FUNCTION = "member_overview_for_admin";

/**
 * Every member of an organization for a manager (SPEC §8 Members), removed ones included, with
 * how far each has onboarded: the number of working-profile answers and the newest update. The
 * answers are only counted, never read; the app role cannot see other members' rows (RLS: owner
 * only), so this relies on the same owner bypass as {@link ADMIN_FUNCTION}.
 */
export const memberOverviewDefiner = definerFunction({
  name: MEMBER_OVERVIEW_FUNCTION,
  params: "p_organization_id uuid, p_requester_id uuid",
  returns: `TABLE (
  user_id uuid,
  email text,
  role text,
  created_at timestamptz,
  removed_at timestamptz,
  answers integer,
  last_answer_at timestamptz
)`,
  volatility: "STABLE",
  body: `BEGIN
${MANAGER_GUARD}
  RETURN QUERY
    SELECT m.user_id, m.email, m.role, m.created_at, m.removed_at,
           count(a.question_id)::integer, max(a.updated_at)
    FROM public.members m
    LEFT JOIN public.working_profile_answers a
      ON a.organization_id = m.organization_id AND a.owner_user_id = m.user_id
    WHERE m.organization_id = p_organization_id
    GROUP BY m.organization_id, m.user_id
    ORDER BY lower(m.email), m.user_id;
END`,
});

export const API_TOKENS_ADMIN_FUNCTION = "api_tokens_for_admin";

/**
 * A member's API tokens for a manager of their organization, or every member's when
 * `p_user_id` is null (the Members page counts them). The app role has no privilege on
 * `api_tokens`; this returns what a manager needs to decide on a revocation and never the hash.
 */
export const adminApiTokensDefiner = definerFunction({
  name: API_TOKENS_ADMIN_FUNCTION,
  params: "p_organization_id uuid, p_requester_id uuid, p_user_id uuid",
  returns: `TABLE (
  id uuid,
  user_id uuid,
  scopes text[],
  created_at timestamptz,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
)`,
  volatility: "STABLE",
  body: `BEGIN
${MANAGER_GUARD}
  RETURN QUERY
    SELECT t.id, t.user_id, t.scopes, t.created_at, t.expires_at, t.last_used_at, t.revoked_at
    FROM public.api_tokens t
    WHERE t.organization_id = p_organization_id
      AND (p_user_id IS NULL OR t.user_id = p_user_id)
    ORDER BY t.created_at DESC, t.id;
END`,
});

export const REVOKE_TOKEN_ADMIN_FUNCTION = "revoke_api_token_for_admin";

/**
 * Revokes one live (neither revoked nor expired) API token of the organization for a manager of
 * it; true when it did. The token stops resolving at once (`resolve_api_token` reads
 * `revoked_at` on every request), and a console session opened with it ends.
 */
export const adminRevokeTokenDefiner = definerFunction({
  name: REVOKE_TOKEN_ADMIN_FUNCTION,
  params: "p_organization_id uuid, p_requester_id uuid, p_token_id uuid",
  returns: "boolean",
  volatility: "VOLATILE",
  body: `BEGIN
${MANAGER_GUARD}
  UPDATE public.api_tokens t SET revoked_at = pg_catalog.now()
  WHERE t.id = p_token_id
    AND t.organization_id = p_organization_id
    AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now());
  RETURN FOUND;
END`,
});
