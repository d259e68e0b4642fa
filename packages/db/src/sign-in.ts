import { and, eq, isNull, sql } from "drizzle-orm";
import { ENTER_IF_FOUND } from "./api-tokens.ts";
import type { Database, Tx } from "./client.ts";
import { definerFunction } from "./definer.ts";
import { normalizedEmailSql } from "./email.ts";
import * as as from "./schema/authorization-server.ts";
import { members, organizations } from "./schema/index.ts";
import { type Tenant, withTenant } from "./tenant.ts";

export type SignInOutcome =
  | "bound"
  | "matched"
  | "not_member"
  | "domain_not_allowed"
  | "bound_elsewhere";

export interface SignInMatch {
  outcome: SignInOutcome;
  /** Set for `bound` and `matched`. */
  userId: string | null;
  role: "member" | "manager" | null;
}

/**
 * Maps a verified IdP identity to a member of the transaction's organisation (run it inside
 * `withOrganization`), binding (issuer, subject) on the first match. The organisation comes from
 * the tenant settings, never from an argument, so no caller can name another one.
 */
export async function signInMember(
  tx: Tx,
  params: { issuer: string; subject: string; email: string },
): Promise<SignInMatch> {
  const rows = await tx.execute<{ user_id: string | null; role: string | null; outcome: string }>(
    sql`select * from public.sign_in_member(${params.issuer}, ${params.subject}, ${params.email})`,
  );
  const row = rows[0];
  return {
    outcome: (row?.outcome ?? "not_member") as SignInOutcome,
    userId: row?.user_id ?? null,
    role: (row?.role ?? null) as SignInMatch["role"],
  };
}

export interface ActiveMember {
  organizationId: string;
  role: "member" | "manager";
}

/** The active member behind a user id (organisation and role), or null once they are removed. */
export async function activeMemberForUser(
  db: Database,
  userId: string,
): Promise<ActiveMember | null> {
  const rows = await db.execute<{ organization_id: string; role: string }>(
    sql`select * from public.active_member_for_user(${userId}::uuid)`,
  );
  const row = rows[0];
  return row
    ? { organizationId: row.organization_id, role: row.role as ActiveMember["role"] }
    : null;
}

/** The tenant member's own email (RLS: read in their organisation's transaction). */
export async function memberEmail(db: Database, tenant: Tenant): Promise<string> {
  const [row] = await withTenant(db, tenant, (tx) =>
    tx
      .select({ email: members.email })
      .from(members)
      .where(
        and(
          eq(members.organizationId, tenant.organizationId),
          eq(members.userId, tenant.userId),
          isNull(members.removedAt),
        ),
      ),
  );
  return row?.email ?? "";
}

export interface ResolvedGrant {
  organizationId: string;
  role: "member" | "manager";
  grantId: string;
  /** A token sign-in's scopes, the most the grant's tokens carry; null for the IdP. */
  scopeCap: string[] | null;
}

/**
 * The check behind a North access token (with the grant id it carries) or a refresh (`grantId`
 * null): active member, grant still in place, within its lifetime, its opening API token still
 * live (decision 029).
 */
export async function resolveOAuthGrant(
  db: Database,
  userId: string,
  clientId: string,
  grantId: string | null,
): Promise<ResolvedGrant | null> {
  const rows = await db.execute<{
    organization_id: string;
    role: string;
    grant_id: string;
    scope_cap: string[] | null;
  }>(sql`select * from public.resolve_oauth_grant(${userId}::uuid, ${clientId}, ${grantId}::uuid)`);
  const row = rows[0];
  return row
    ? {
        organizationId: row.organization_id,
        role: row.role as ResolvedGrant["role"],
        grantId: row.grant_id,
        scopeCap: row.scope_cap,
      }
    : null;
}

/**
 * The authorization server's record of a member (a better-auth `user`), created on the first
 * sign-in. It holds no personal data: the email is a placeholder, the member's lives in North.
 */
export async function ensureAuthorizationServerUser(db: Database, userId: string): Promise<void> {
  await db
    .insert(as.user)
    .values({
      id: userId,
      name: "North member",
      email: `${userId}@members.north.invalid`,
      emailVerified: true,
      createdAt: new Date(),
      updatedAt: new Date(),
    })
    .onConflictDoNothing();
}

// --- Operator side (owner connection) -------------------------------------------------------

/** The tenant's organisation name (RLS: the app role sees only its own organisation). */
export async function organizationName(db: Database, tenant: Tenant): Promise<string> {
  const [row] = await withTenant(db, tenant, (tx) =>
    tx
      .select({ name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId)),
  );
  return row?.name ?? "";
}

export const SIGN_IN_MEMBER_FUNCTION = "sign_in_member";

/**
 * Maps a verified IdP identity to a member of the transaction's organisation (SPEC §3a): by the
 * (issuer, subject) pair bound at an earlier sign-in, else by the verified email among the
 * organisation's active members, compared after the one email normalisation (email.ts: no
 * `lower()`, so a non-ASCII look-alike never matches an ASCII member), which then binds the pair.
 * The email match needs the address's domain to be one of the organisation's `sso_domains`
 * ("by verified email within the organisation's domains"): a shared or multi-tenant IdP that
 * vouches for an address elsewhere does not sign in the member holding it.
 * `outcome` says which, or why nobody matched: `not_member` (no such active member — there is no
 * self-signup), `domain_not_allowed` (the email is outside the organisation's domains) or
 * `bound_elsewhere` (the member is already bound to another subject at this
 * issuer: an email the IdP moved to another account does not inherit the member). The
 * organisation is the transaction's tenant (`north.organization_id`), never an argument; without
 * one it raises 42501.
 */
export const signInMemberDefiner = definerFunction({
  name: SIGN_IN_MEMBER_FUNCTION,
  params: "p_issuer text, p_subject text, p_email text",
  returns: "TABLE (user_id uuid, role text, outcome text)",
  volatility: "VOLATILE",
  body: `DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_user uuid;
  v_role text;
BEGIN
  IF v_organization_id IS NULL THEN
    RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
  END IF;
  SELECT m.user_id, m.role INTO v_user, v_role
  FROM public.member_identities i
  JOIN public.members m ON m.organization_id = i.organization_id AND m.user_id = i.user_id
  WHERE i.issuer = p_issuer AND i.subject = p_subject
    AND i.organization_id = v_organization_id AND m.removed_at IS NULL;
  IF v_user IS NOT NULL THEN
    RETURN QUERY SELECT v_user, v_role, 'bound'::text;
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM public.member_identities i
             WHERE i.issuer = p_issuer AND i.subject = p_subject) THEN
    RETURN QUERY SELECT NULL::uuid, NULL::text, 'not_member'::text;
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM public.sso_domains d
                 WHERE d.organization_id = v_organization_id
                   AND d.domain = pg_catalog.substring(${normalizedEmailSql("p_email")}, '@([^@]+)$')) THEN
    RETURN QUERY SELECT NULL::uuid, NULL::text, 'domain_not_allowed'::text;
    RETURN;
  END IF;
  SELECT m.user_id, m.role INTO v_user, v_role
  FROM public.members m
  WHERE m.organization_id = v_organization_id
    AND ${normalizedEmailSql("m.email")} = ${normalizedEmailSql("p_email")}
    AND m.removed_at IS NULL;
  IF v_user IS NULL THEN
    RETURN QUERY SELECT NULL::uuid, NULL::text, 'not_member'::text;
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM public.member_identities i
             WHERE i.user_id = v_user AND i.issuer = p_issuer) THEN
    RETURN QUERY SELECT NULL::uuid, NULL::text, 'bound_elsewhere'::text;
    RETURN;
  END IF;
  INSERT INTO public.member_identities (issuer, subject, organization_id, user_id)
  VALUES (p_issuer, p_subject, v_organization_id, v_user);
  RETURN QUERY SELECT v_user, v_role, 'matched'::text;
END`,
});

export const MEMBER_FOR_USER_FUNCTION = "active_member_for_user";

/**
 * The active member behind a user id the authorization server already holds (its session, a
 * token's subject): organisation and role, for the sign-in pages and token claims. No email:
 * the library's user table lists every user id, so what this answers for any id must not name
 * people; the consent page reads the email in the member's own tenant (`memberEmail`).
 */
export const memberForUserDefiner = definerFunction({
  name: MEMBER_FOR_USER_FUNCTION,
  params: "p_user_id uuid",
  returns: "TABLE (organization_id uuid, role text)",
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT m.organization_id, m.role
    FROM public.members m
    WHERE m.user_id = p_user_id AND m.removed_at IS NULL;
END`,
});

export const RESOLVE_GRANT_FUNCTION = "resolve_oauth_grant";

/**
 * Whether an organisation may be signed in to with a pasted API token: only while it has no IdP
 * (SPEC §3a). A grant or browser session opened by token ends once an IdP is configured.
 */
export const TOKEN_SIGN_IN_ALLOWED = (organization: string) => `NOT EXISTS (
        SELECT 1 FROM public.sso_connections s WHERE s.organization_id = ${organization})`;

/** The API token `token` of `user`, neither revoked nor expired. */
export const TOKEN_LIVE = (token: string, user: string) => `EXISTS (
        SELECT 1 FROM public.api_tokens t
        WHERE t.id = ${token} AND t.user_id = ${user}
          AND t.revoked_at IS NULL
          AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now()))`;

/**
 * The resource server's per-request check of a North access token, and the token endpoint's
 * before a refresh (SPEC §3a, decision 029): the member is still active, the grant (the
 * member's consent to that client, with North's record of what opened it) still exists and is
 * within its absolute lifetime, the API token that opened it (if one did) is neither revoked nor
 * expired and its organisation still has no IdP, and — for an access token — the token was
 * issued under this very grant (`p_grant_id`, its `north_grant` claim), not an earlier one that
 * was revoked before the member consented again (null at the token endpoint). Returns the
 * grant's scope cap too (a token sign-in's scopes; null for the IdP). One round trip.
 */
export const resolveGrantDefiner = definerFunction({
  name: RESOLVE_GRANT_FUNCTION,
  params: "p_user_id uuid, p_client_id text, p_grant_id uuid",
  returns: "TABLE (organization_id uuid, role text, grant_id text, scope_cap text[])",
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT m.organization_id, m.role, c.id, g.scope_cap
    FROM north_auth.oauth_consent c
    JOIN north_auth.oauth_grant g ON g.consent_id = c.id
    JOIN public.members m ON m.organization_id = g.organization_id AND m.user_id = g.user_id
    WHERE c.user_id = p_user_id::text AND c.client_id = p_client_id
      AND g.user_id = p_user_id AND g.client_id = p_client_id
      AND m.removed_at IS NULL
      AND g.expires_at > pg_catalog.now()
      AND (p_grant_id IS NULL OR g.id = p_grant_id)
      AND (g.api_token_id IS NULL OR (${TOKEN_LIVE("g.api_token_id", "p_user_id")}
        AND ${TOKEN_SIGN_IN_ALLOWED("g.organization_id")}))
    LIMIT 1;
END`,
});

export const ENTER_AS_OAUTH_GRANT_FUNCTION = "enter_as_oauth_grant";

/**
 * Opens a tool call's transaction for the principal of a North access token that North
 * remembered instead of looking up (decision 036, extended to grants by decision 041): proves,
 * in the same transaction as the call's work, that the grant still holds — by
 * {@link RESOLVE_GRANT_FUNCTION} itself, so membership, revocation, lifetime, the opening API
 * token and the organisation's IdP are the same rule — for exactly this member, client, grant,
 * organisation, role and scope cap (`p_scope_cap`: the cap's scopes joined by spaces, null for
 * none), then sets the tenant. Anything else raises `NA401` (`ENTER_IF_FOUND`): the
 * transaction is aborted before any statement of the work runs.
 */
export const enterAsOAuthGrantDefiner = definerFunction({
  name: ENTER_AS_OAUTH_GRANT_FUNCTION,
  params:
    "p_user_id uuid, p_client_id text, p_grant_id uuid, p_organization_id uuid, p_role text, p_scope_cap text",
  returns: "void",
  volatility: "VOLATILE",
  body: `BEGIN
  -- A null grant id would match any of the member's grants for the client: never a proof.
  PERFORM 1 FROM public.${RESOLVE_GRANT_FUNCTION}(p_user_id, p_client_id, p_grant_id) r
  WHERE p_grant_id IS NOT NULL
    AND r.organization_id = p_organization_id
    AND r.role = p_role
    AND r.scope_cap IS NOT DISTINCT FROM pg_catalog.string_to_array(p_scope_cap, ' ');
${ENTER_IF_FOUND}
END`,
});
