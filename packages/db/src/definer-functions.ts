import { normalizedEmailSql } from "./email.ts";
import { CREDENTIAL_REFUSED_SQLSTATE } from "./pg-errors.ts";
import { TENANT_ORGANIZATION_SETTING, TENANT_USER_SETTING } from "./schema/tenant-settings.ts";
import {
  HNSW_INDEX_FORMAT,
  modelDimensionsSql,
  pgvectorCurrentSql,
  VECTOR_INDEX_INLINE_LIMIT,
  vectorIndexNameSql,
  vectorTypeSql,
} from "./vector-search.ts";

/**
 * The SECURITY DEFINER functions provisioning owns (SPEC §6). Each is dropped and re-created on
 * every `north provision`, owned by `forma`, executable by its one grantee and nobody else:
 * `app_role`, or {@link MAINTENANCE_ROLE} for the few that span organisations (decision 031).
 *
 * {@link definerFunction} writes the part every one of them must share — `SECURITY DEFINER`,
 * `search_path` pinned to `pg_catalog, pg_temp` (so a temporary table named like one of ours is
 * never looked up) and plpgsql's `use_column` rule — so no definition can forget it. Bodies
 * schema-qualify every relation.
 */

/**
 * The group role holding EXECUTE on the definer functions that span organisations (decision
 * 031). Its login is a role of its own: the app login is never a member, so the request path
 * cannot run them at all (PostgreSQL 15 has no per-membership NOINHERIT to fence them off).
 */
export const MAINTENANCE_ROLE = "north_maintenance";

export interface DefinerFunction {
  name: string;
  /** Argument types only, as `DROP`/`ALTER`/`GRANT` name the function: `uuid, uuid`. */
  argTypes: string;
  /** The one role granted EXECUTE. */
  grantee: "app_role" | typeof MAINTENANCE_ROLE;
  /** The full `CREATE FUNCTION` statement. */
  sql: string;
}

function definerFunction(spec: {
  name: string;
  /**
   * Who may run it; default `app_role`, whose functions each read the organisation from the
   * transaction's tenant settings or are a pre-tenant lookup (decision 031). A function that
   * spans organisations is the maintenance role's.
   */
  grantee?: DefinerFunction["grantee"];
  /** Named parameters: `p_organization_id uuid, p_requester_id uuid`. */
  params: string;
  returns: string;
  volatility: "STABLE" | "VOLATILE";
  /**
   * For a set-returning function, the rows the planner should expect (PostgreSQL assumes 1,000):
   * a caller joining the result then looks its rows up by key instead of scanning for them.
   */
  rows?: number;
  /** Settings the function runs with, restored when it returns: `lock_timeout = '2s'`. */
  settings?: string[];
  /** From `BEGIN` to `END`. */
  body: string;
}): DefinerFunction {
  const argTypes = spec.params
    .split(",")
    .map((param) => param.trim().split(/\s+/).slice(1).join(" "))
    .filter(Boolean)
    .join(", ");
  return {
    name: spec.name,
    argTypes,
    grantee: spec.grantee ?? "app_role",
    sql: `
CREATE FUNCTION public.${spec.name}(${spec.params})
RETURNS ${spec.returns}
LANGUAGE plpgsql
${spec.volatility}${spec.rows ? `\nROWS ${spec.rows}` : ""}
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp${(spec.settings ?? []).map((setting) => `\nSET ${setting}`).join("")}
AS $fn$
#variable_conflict use_column
${spec.body}
$fn$`,
  };
}

/**
 * The opening of every manager-only function: the requester must be the transaction's tenant
 * (so a caller cannot name someone else) and a manager of that organization; anything else
 * raises 42501.
 */
const MANAGER_GUARD = `
  IF p_organization_id IS NULL OR p_requester_id IS NULL
     OR p_organization_id IS DISTINCT FROM nullif(current_setting('north.organization_id', true), '')::uuid
     OR p_requester_id IS DISTINCT FROM nullif(current_setting('north.user_id', true), '')::uuid THEN
    RAISE EXCEPTION 'requester does not match the transaction tenant' USING ERRCODE = '42501';
  END IF;
  IF NOT EXISTS (
    SELECT 1 FROM public.members m
    WHERE m.organization_id = p_organization_id
      AND m.user_id = p_requester_id
      AND m.role = 'manager'
      AND m.removed_at IS NULL
  ) THEN
    RAISE EXCEPTION 'requester is not a manager of this organization' USING ERRCODE = '42501';
  END IF;`;

export const ADMIN_FUNCTION = "working_profile_answers_for_admin";

/**
 * Every member's working profile for a manager (SPEC §6).
 *
 * Owner bypass: this function is SECURITY DEFINER and owned by `forma`, which owns
 * `working_profile_answers` and `members`. Both tables have RLS enabled but not forced, so the
 * owner's reads skip the owner-only policy; that is the only reason this sees other members'
 * rows. Forcing RLS on those tables, or changing either owner, silently empties its result.
 * The schema's policy comment (schema/working-profile.ts) names the same dependency.
 */
const adminProfiles = definerFunction({
  name: ADMIN_FUNCTION,
  params: "p_organization_id uuid, p_requester_id uuid",
  returns: `TABLE (
  owner_user_id uuid,
  owner_email text,
  question_id text,
  question_text text,
  answer text,
  version integer,
  created_at timestamptz,
  updated_at timestamptz
)`,
  volatility: "STABLE",
  body: `BEGIN
${MANAGER_GUARD}
  RETURN QUERY
    SELECT a.owner_user_id, m.email, a.question_id, a.question_text, a.answer, a.version,
           a.created_at, a.updated_at
    FROM public.working_profile_answers a
    JOIN public.members m ON m.organization_id = a.organization_id AND m.user_id = a.owner_user_id
    WHERE a.organization_id = p_organization_id
    ORDER BY m.email, a.created_at, a.question_id;
END`,
});

export const RESOLVE_TOKEN_FUNCTION = "resolve_api_token";

/**
 * The principal behind an API token hash, if the token is neither expired nor revoked and its
 * user is still a member. SECURITY DEFINER owned by `forma`: the app role has no privilege on
 * `api_tokens`, so this is its only way in, and it can only look up a hash it already holds.
 * `last_used_at` is written at most once a minute per token, so busy tokens do not turn every
 * request into a write.
 */
const resolveToken = definerFunction({
  name: RESOLVE_TOKEN_FUNCTION,
  params: "p_token_hash text",
  returns: "TABLE (token_id uuid, organization_id uuid, user_id uuid, role text, scopes text[])",
  volatility: "VOLATILE",
  body: `BEGIN
  RETURN QUERY
    WITH found AS (
      SELECT t.id, t.organization_id, t.user_id, t.scopes, t.last_used_at
      FROM public.api_tokens t
      WHERE t.token_hash = p_token_hash
        AND t.revoked_at IS NULL
        AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now())
    ), touched AS (
      UPDATE public.api_tokens t SET last_used_at = pg_catalog.now()
      FROM found f
      WHERE t.id = f.id
        AND (f.last_used_at IS NULL OR f.last_used_at < pg_catalog.now() - interval '1 minute')
    )
    SELECT f.id, f.organization_id, f.user_id, m.role, f.scopes
    FROM found f
    JOIN public.members m ON m.organization_id = f.organization_id AND m.user_id = f.user_id
    WHERE m.removed_at IS NULL;
END`,
});

export const ENTER_AS_API_TOKEN_FUNCTION = "enter_as_api_token";

/**
 * Opens a tool call's transaction for a principal North remembered instead of looking up
 * (decision 036): proves, in the same transaction as the call's work, that the token still
 * resolves — by {@link RESOLVE_TOKEN_FUNCTION} itself, so expiry, revocation and membership are
 * the same rule — to exactly this token, organisation, user and role, then sets the tenant.
 * Anything else raises {@link CREDENTIAL_REFUSED_SQLSTATE}: the transaction is aborted before any
 * statement of the work runs, and no tenant is ever set from a credential that no longer holds.
 */
const enterAsApiToken = definerFunction({
  name: ENTER_AS_API_TOKEN_FUNCTION,
  params: "p_token_hash text, p_token_id uuid, p_organization_id uuid, p_user_id uuid, p_role text",
  returns: "void",
  volatility: "VOLATILE",
  body: `BEGIN
  PERFORM 1 FROM public.${RESOLVE_TOKEN_FUNCTION}(p_token_hash) r
  WHERE r.token_id = p_token_id
    AND r.organization_id = p_organization_id
    AND r.user_id = p_user_id
    AND r.role = p_role;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the credential no longer holds' USING ERRCODE = '${CREDENTIAL_REFUSED_SQLSTATE}';
  END IF;
  PERFORM pg_catalog.set_config('${TENANT_ORGANIZATION_SETTING}', p_organization_id::text, true),
          pg_catalog.set_config('${TENANT_USER_SETTING}', p_user_id::text, true);
END`,
});

export const PURGE_FUNCTION = "purge_expired_memories";

/**
 * Removes the bodies (and subject ids and embeddings) of every expired memory in every
 * organization and writes one audit row per organization purged. SECURITY DEFINER owned by
 * `forma` so the server's periodic purge, on the maintenance login, can reach all tenants; it
 * takes no argument and returns only counts. The app role may not run it.
 */
const purgeMemories = definerFunction({
  name: PURGE_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "",
  returns: "TABLE (organization_id uuid, purged integer)",
  volatility: "VOLATILE",
  body: `BEGIN
  RETURN QUERY
    WITH erased AS (
      UPDATE public.memories m
      SET body = NULL, subject_id = NULL, embedding = NULL, purged_at = pg_catalog.now()
      WHERE m.expires_at <= pg_catalog.now() AND m.purged_at IS NULL AND m.forgotten_at IS NULL
      RETURNING m.organization_id
    ), counted AS (
      SELECT e.organization_id, count(*)::integer AS purged FROM erased e GROUP BY e.organization_id
    ), audited AS (
      INSERT INTO public.audit_events (organization_id, tool, outcome, affected)
      SELECT c.organization_id, 'north_purge', 'purged', c.purged FROM counted c
    )
    SELECT c.organization_id, c.purged FROM counted c;
END`,
});

export const AUDIT_ADMIN_FUNCTION = "audit_events_for_admin";

/** What both directions of {@link adminAudit} select, filter and join. */
const AUDIT_PAGE_SELECT = `
      SELECT e.id, e.occurred_at, e.actor_id, m.email, e.token_id, e.tool, e.outcome, e.reason,
             e.target_fingerprint, e.target_length, e.affected
      FROM public.audit_events e
      LEFT JOIN public.members m ON m.organization_id = e.organization_id AND m.user_id = e.actor_id
      WHERE e.organization_id = p_organization_id
        AND (p_actor_id IS NULL OR e.actor_id = p_actor_id)
        AND (p_tool IS NULL OR e.tool = p_tool)
        AND (p_outcome IS NULL OR e.outcome = p_outcome)
        AND (p_from IS NULL OR e.occurred_at >= p_from)
        AND (p_to IS NULL OR e.occurred_at < p_to)`;

/**
 * One page of an organization's audit events, newest first, for a manager of it (the app role
 * may only INSERT into the ledger). Same checks as the profile function: the requester must be
 * the transaction's tenant and a manager. Every filter is optional (null: any): actor, tool,
 * outcome, and `[p_from, p_to)`. Keyset paging on `(occurred_at, id)`: `p_before_*` gives the
 * page older than that row, `p_after_*` the page just newer than it (still returned newest
 * first); at most one cursor, at most 500 rows a call. The ledger holds no body.
 */
const adminAudit = definerFunction({
  name: AUDIT_ADMIN_FUNCTION,
  params: `p_organization_id uuid, p_requester_id uuid, p_actor_id uuid, p_tool text,
    p_outcome text, p_from timestamptz, p_to timestamptz, p_before_time timestamptz,
    p_before_id uuid, p_after_time timestamptz, p_after_id uuid, p_limit integer`,
  returns: `TABLE (
  id uuid,
  occurred_at timestamptz,
  actor_id uuid,
  actor_email text,
  token_id uuid,
  tool text,
  outcome text,
  reason text,
  target_fingerprint text,
  target_length integer,
  affected integer
)`,
  volatility: "STABLE",
  body: `DECLARE
  v_limit integer := least(greatest(coalesce(p_limit, 100), 1), 500);
BEGIN
${MANAGER_GUARD}
  IF (p_before_time IS NULL) <> (p_before_id IS NULL)
     OR (p_after_time IS NULL) <> (p_after_id IS NULL)
     OR (p_before_time IS NOT NULL AND p_after_time IS NOT NULL) THEN
    RAISE EXCEPTION 'a cursor is a time and an id, and only one of before and after'
      USING ERRCODE = '22023';
  END IF;
  IF p_after_time IS NULL THEN
    RETURN QUERY${AUDIT_PAGE_SELECT}
        AND (p_before_time IS NULL OR (e.occurred_at, e.id) < (p_before_time, p_before_id))
      ORDER BY e.occurred_at DESC, e.id DESC
      LIMIT v_limit;
  ELSE
    RETURN QUERY
      SELECT newer.* FROM (${AUDIT_PAGE_SELECT}
          AND (e.occurred_at, e.id) > (p_after_time, p_after_id)
        ORDER BY e.occurred_at ASC, e.id ASC
        LIMIT v_limit
      ) newer
      ORDER BY newer.occurred_at DESC, newer.id DESC;
  END IF;
END`,
});

export const RESOLVE_SESSION_FUNCTION = "resolve_admin_session";

/**
 * The console session behind a session-id hash, if it is live: not ended, within its absolute
 * expiry and its idle window, its API token neither revoked nor expired and still carrying
 * `admin`, its member still a manager and not removed. A live session's `last_seen_at` moves
 * to now (the idle window restarts); one that fails any check is ended on the spot, so a
 * revocation or removal is final even if it were later undone. SECURITY DEFINER owned by
 * `forma`: the lookup happens before the tenant is known, and it can only find a hash the
 * caller already holds.
 */
const resolveSession = definerFunction({
  name: RESOLVE_SESSION_FUNCTION,
  params: "p_session_hash text",
  returns:
    "TABLE (session_id uuid, organization_id uuid, user_id uuid, token_id uuid, csrf_token text)",
  volatility: "VOLATILE",
  body: `DECLARE
  s public.admin_sessions%ROWTYPE;
BEGIN
  SELECT * INTO s FROM public.admin_sessions a
  WHERE a.session_hash = p_session_hash AND a.ended_at IS NULL;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF s.expires_at <= pg_catalog.now()
     OR s.last_seen_at <= pg_catalog.now() - pg_catalog.make_interval(secs => s.idle_timeout_s)
     -- Opened through the organisation's IdP (no token): the member must still be a manager.
     OR (s.token_id IS NULL AND NOT EXISTS (
       SELECT 1 FROM public.members m
       WHERE m.organization_id = s.organization_id AND m.user_id = s.user_id
         AND m.role = 'manager' AND m.removed_at IS NULL
     ))
     OR (s.token_id IS NOT NULL AND NOT EXISTS (
       SELECT 1
       FROM public.api_tokens t
       JOIN public.members m ON m.organization_id = t.organization_id AND m.user_id = t.user_id
       WHERE t.id = s.token_id
         AND t.organization_id = s.organization_id
         AND t.user_id = s.user_id
         AND t.revoked_at IS NULL
         AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now())
         AND 'admin' = ANY (t.scopes)
         AND m.role = 'manager'
         AND m.removed_at IS NULL
     )) THEN
    UPDATE public.admin_sessions a SET ended_at = pg_catalog.now() WHERE a.id = s.id;
    RETURN;
  END IF;
  UPDATE public.admin_sessions a SET last_seen_at = pg_catalog.now() WHERE a.id = s.id;
  RETURN QUERY SELECT s.id, s.organization_id, s.user_id, s.token_id, s.csrf_token;
END`,
});

const SSO_CONNECTION_COLUMNS =
  "TABLE (organization_id uuid, issuer text, client_id text, client_secret_encrypted text)";

export const SSO_FOR_DOMAIN_FUNCTION = "sso_connection_for_domain";

/**
 * Home-realm discovery (SPEC §3a): the IdP configured for an email domain, before anyone is
 * signed in. The app role has no grant on `sso_connections`; this is its way in, one domain at a
 * time, and what it returns is what a redirect to the IdP needs.
 */
const ssoForDomain = definerFunction({
  name: SSO_FOR_DOMAIN_FUNCTION,
  params: "p_domain text",
  returns: SSO_CONNECTION_COLUMNS,
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT c.organization_id, c.issuer, c.client_id, c.client_secret_encrypted
    FROM public.sso_domains d
    JOIN public.sso_connections c ON c.organization_id = d.organization_id
    WHERE d.domain = lower(p_domain);
END`,
});

export const SSO_FOR_ORGANIZATION_FUNCTION = "sso_connection_for_organization";

/** The IdP of one organisation, for the callback of a sign-in that discovery started. */
const ssoForOrganization = definerFunction({
  name: SSO_FOR_ORGANIZATION_FUNCTION,
  params: "p_organization_id uuid",
  returns: SSO_CONNECTION_COLUMNS,
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT c.organization_id, c.issuer, c.client_id, c.client_secret_encrypted
    FROM public.sso_connections c
    WHERE c.organization_id = p_organization_id;
END`,
});

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
const signInMember = definerFunction({
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
const memberForUser = definerFunction({
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
const TOKEN_SIGN_IN_ALLOWED = (organization: string) => `NOT EXISTS (
        SELECT 1 FROM public.sso_connections s WHERE s.organization_id = ${organization})`;

/** The API token `token` of `user`, neither revoked nor expired. */
const TOKEN_LIVE = (token: string, user: string) => `EXISTS (
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
const resolveGrant = definerFunction({
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

export const SIGN_IN_RECORD_FUNCTION = "sign_in_session_record";

/**
 * North's record of a live authorization-server browser session of `p_user_id` (decision 029):
 * how it signed in and, for a pasted API token, the token and its scopes — only while that
 * token is neither revoked nor expired and its organisation has no IdP, so a session opened
 * with a token that has since been revoked mints nothing more. A lookup by the session id the
 * library resolved from the browser's own cookie; one row at most.
 */
const signInRecord = definerFunction({
  name: SIGN_IN_RECORD_FUNCTION,
  params: "p_session_id text, p_user_id uuid",
  returns: "TABLE (organization_id uuid, method text, api_token_id uuid, scope_cap text[])",
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT r.organization_id, r.method, r.api_token_id, r.scope_cap
    FROM north_auth.sign_in_session r
    JOIN north_auth.session s ON s.id = r.session_id
    WHERE r.session_id = p_session_id AND r.user_id = p_user_id
      AND s.expires_at > pg_catalog.now()
      AND (r.api_token_id IS NULL OR (${TOKEN_LIVE("r.api_token_id", "p_user_id")}
        AND ${TOKEN_SIGN_IN_ALLOWED("r.organization_id")}));
END`,
});

export const MEMBER_OVERVIEW_FUNCTION = "member_overview_for_admin";

/**
 * Every member of an organization for a manager (SPEC §8 Members), removed ones included, with
 * how far each has onboarded: the number of working-profile answers and the newest update. The
 * answers are only counted, never read; the app role cannot see other members' rows (RLS: owner
 * only), so this relies on the same owner bypass as {@link ADMIN_FUNCTION}.
 */
const memberOverview = definerFunction({
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
const adminApiTokens = definerFunction({
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
const adminRevokeToken = definerFunction({
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

export const TO_EMBED_FUNCTION = "memories_to_embed";

/**
 * The embeddings backfill's work list (SPEC §5: a memory stored while the provider failed is
 * embedded later), across organisations: live memories with no vector from `p_model` (none yet,
 * or another model's), newest first. A system job's door: it returns ids and bodies only to the
 * server's maintenance login, which sends them to the configured provider as it does at write
 * time. The app role may not run it: it would hand any holder of the app login every body.
 */
const toEmbed = definerFunction({
  name: TO_EMBED_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "p_model text, p_limit integer",
  returns: "TABLE (id uuid, body text)",
  volatility: "STABLE",
  body: `BEGIN
  RETURN QUERY
    SELECT m.id, m.body
    FROM public.memories m
    WHERE m.body IS NOT NULL
      AND m.forgotten_at IS NULL AND m.purged_at IS NULL AND m.superseded_by IS NULL
      AND m.expires_at > pg_catalog.now()
      AND m.embedding_model IS DISTINCT FROM p_model
    ORDER BY m.created_at DESC
    LIMIT least(greatest(p_limit, 1), 256);
END`,
});

export const SET_EMBEDDING_FUNCTION = "set_memory_embedding";

/**
 * Stores a backfilled vector, unless the memory lost its body meanwhile (erased or purged): the
 * erased-have-no-vector rule holds whatever the timing. Any organisation's memory, by id: the
 * maintenance role's alone.
 */
const setEmbedding = definerFunction({
  name: SET_EMBEDDING_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "p_id uuid, p_embedding real[], p_model text",
  returns: "boolean",
  volatility: "VOLATILE",
  body: `BEGIN
  UPDATE public.memories m
  SET embedding = p_embedding, embedding_model = p_model
  WHERE m.id = p_id AND m.body IS NOT NULL
    AND m.forgotten_at IS NULL AND m.purged_at IS NULL;
  RETURN FOUND;
END`,
});

export const FULLTEXT_CANDIDATES_FUNCTION = "memory_fulltext_candidates";

/** Returns one tier's arrays (`v_ids`, `v_ranks`, from {@link rankedSql}) as rows, in order. */
const RETURN_RANKED = `RETURN QUERY
    SELECT u.id, u.rank
    FROM ROWS FROM (pg_catalog.unnest(v_ids), pg_catalog.unnest(v_ranks)) WITH ORDINALITY AS u(id, rank, n)
    ORDER BY u.n;`;

/**
 * One tier of full-text recall, as the dynamic SQL `memory_fulltext_candidates` runs: of the
 * tenant's ($2) live memories, optionally one subject ($3, $4), the newest $6 matching the
 * tsquery $1, best `ts_rank` first, at most $5, as two arrays in that order (ids, ranks).
 * `also` adds a condition, such as leaving out the ids already found ($7).
 */
function rankedSql(also: string): string {
  return `$q$
    SELECT pg_catalog.array_agg(c.id ORDER BY c.rank DESC, c.created_at DESC),
           pg_catalog.array_agg(c.rank ORDER BY c.rank DESC, c.created_at DESC)
    FROM (
      SELECT c.id, pg_catalog.ts_rank(c.search, $1) AS rank, c.created_at
      FROM (
        SELECT m.id, m.search, m.created_at
        FROM public.memories m
        WHERE m.organization_id = $2
          AND m.forgotten_at IS NULL AND m.purged_at IS NULL AND m.superseded_by IS NULL
          AND m.expires_at > pg_catalog.now()
          AND ($3::text IS NULL OR m.subject_fingerprint = $3)
          AND ($4::text IS NULL OR m.subject_type = $4)
          AND m.search @@ $1 ${also}
        ORDER BY m.created_at DESC
        LIMIT $6
      ) c
      ORDER BY rank DESC, c.created_at DESC
      LIMIT $5
    ) c$q$`;
}

/**
 * Full-text recall's ranked list (decisions 018 and 021), in one call: of the transaction
 * tenant's live memories (of one subject, if given), the newest `p_candidates` matching every
 * word of `p_query` (stemmed in the organisation's language, accents folded), best `ts_rank`
 * first; when fewer than `p_depth` have every word, the places left go to the newest
 * `p_candidates` having some of the words, ranked after them. Rows come in that order. The
 * second tier is planned only when it is needed: a one-word query, or one whose every-word list
 * is full, plans one statement.
 *
 * Why a definer function: under row-level security PostgreSQL may use an index for a condition
 * only if its operator is leakproof, and the text-search match (`@@`) is not, so the app role
 * could never use the GIN index and scanned the whole organisation for a rare word. Here the
 * owner (`forma`, RLS not forced) reads with the index, and the tenant is the transaction's own
 * (`north.organization_id`), never an argument, so no caller can name another organisation; the
 * caller then reads the rows themselves under RLS. `EXECUTE … USING` plans each call with the
 * actual query, so the planner picks between the GIN index (a rare word) and walking
 * `memories_newest` (a common one) on real estimates instead of a cached generic plan. The
 * query's lexemes carry the organisation's tag, as `memories.search` does (decision 027), so
 * the index's posting lists are this organisation's matches alone.
 */
const fulltextCandidates = definerFunction({
  name: FULLTEXT_CANDIDATES_FUNCTION,
  params:
    "p_query text, p_subject_fingerprint text, p_subject_type text, p_depth integer, p_candidates integer",
  returns: "TABLE (id uuid, rank real)",
  volatility: "STABLE",
  // At most p_depth (≤ 100) rows, usually the 5 a recall asks for. Left at PostgreSQL's 1,000,
  // the recall's join hashed every memory of a small organisation instead of five key lookups.
  rows: 20,
  body: `DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_language text;
  v_prefix text;
  v_every tsquery;
  v_some tsquery;
  v_depth integer := least(greatest(p_depth, 1), 100);
  v_candidates integer := least(greatest(p_candidates, 1), 1000);
  v_ids uuid[];
  v_ranks real[];
BEGIN
  IF v_organization_id IS NULL THEN
    RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
  END IF;
  SELECT o.language INTO v_language FROM public.organizations o WHERE o.id = v_organization_id;
  v_prefix := public.north_tenant_prefix(v_organization_id);
  v_every := public.north_search_query(v_language, p_query, true, v_prefix);
  IF v_every IS NULL THEN
    RETURN;
  END IF;
  EXECUTE ${rankedSql("")}
  INTO v_ids, v_ranks
  USING v_every, v_organization_id, p_subject_fingerprint, p_subject_type, v_depth, v_candidates;
  ${RETURN_RANKED}
  IF coalesce(pg_catalog.cardinality(v_ids), 0) >= v_depth THEN
    RETURN;
  END IF;
  -- Places left: the memories having some of the words. Asked only now, so a recall whose
  -- every-word list is full (or whose query is one word) plans one statement, not two.
  v_some := public.north_search_query(v_language, p_query, false, v_prefix);
  IF v_some::text = v_every::text THEN
    RETURN; -- one word: "some of the words" would find the same memories again
  END IF;
  EXECUTE ${rankedSql("AND m.id <> ALL ($7)")}
  INTO v_ids, v_ranks
  USING v_some, v_organization_id, p_subject_fingerprint, p_subject_type,
        v_depth - coalesce(pg_catalog.cardinality(v_ids), 0), v_candidates, coalesce(v_ids, '{}');
  ${RETURN_RANKED}
END`,
});

/**
 * pgvector's schema, into `v_schema`, when the database has pgvector 0.8 or later (its iterative
 * index scans are what keep one organisation's nearest memories findable in a shared index);
 * otherwise null. Needs `v_schema text` declared.
 */
const FIND_PGVECTOR = `SELECT n.nspname INTO v_schema
  FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
  WHERE e.extname = 'vector'
    AND ${pgvectorCurrentSql("e.extversion")};`;

/** Whether the index named `v_index` is there (true), left invalid (false) or absent (null). */
const INDEX_VALID = `(SELECT i.indisvalid FROM pg_catalog.pg_index i
    WHERE i.indexrelid = pg_catalog.to_regclass('public.' || pg_catalog.quote_ident(v_index)))`;

export const ENSURE_VECTOR_INDEX_FUNCTION = "ensure_memory_vector_index";

/**
 * The server's half of decision 028: once the provider has answered, the model's HNSW index, if
 * pgvector is there and the index is not. Built here, inside a transaction, only while the model
 * has at most VECTOR_INDEX_INLINE_LIMIT vectors (a new model has none), so the build holds writes
 * back for a moment at most; beyond that it answers `deferred`, and `north migrate` builds it
 * concurrently. A lock it cannot get within two seconds answers `busy` (tried again later). The
 * model key only names and filters the index: the DDL is `format()`ted with it quoted. It counts
 * and indexes every organisation's vectors: the maintenance role's alone.
 */
const ensureVectorIndex = definerFunction({
  name: ENSURE_VECTOR_INDEX_FUNCTION,
  grantee: MAINTENANCE_ROLE,
  params: "p_model text",
  returns: "text",
  volatility: "VOLATILE",
  settings: ["lock_timeout = '2s'"],
  body: `DECLARE
  v_schema text;
  v_index text := ${vectorIndexNameSql("p_model")};
  v_dimensions integer := ${modelDimensionsSql("p_model")};
  v_type text;
  v_valid boolean;
  v_stored integer;
BEGIN
  ${FIND_PGVECTOR}
  IF v_schema IS NULL THEN
    RETURN 'unavailable';
  END IF;
  v_type := ${vectorTypeSql("v_dimensions")};
  IF v_type IS NULL THEN
    RETURN 'too-large';
  END IF;
  v_valid := ${INDEX_VALID};
  IF v_valid THEN
    RETURN 'present';
  ELSIF NOT v_valid THEN
    RETURN 'invalid';
  END IF;
  SELECT pg_catalog.count(*) INTO v_stored FROM (
    SELECT 1 FROM public.memories m WHERE m.embedding_model = p_model
    LIMIT ${VECTOR_INDEX_INLINE_LIMIT + 1}
  ) s;
  IF v_stored > ${VECTOR_INDEX_INLINE_LIMIT} THEN
    RETURN 'deferred';
  END IF;
  BEGIN
    EXECUTE pg_catalog.format('${HNSW_INDEX_FORMAT}', v_index, v_schema, v_type, v_dimensions, p_model, '');
  EXCEPTION
    WHEN lock_not_available THEN
      RETURN 'busy';
    WHEN duplicate_table OR unique_violation THEN
      RETURN 'present'; -- another server built it meanwhile
  END;
  RETURN 'created';
END`,
});

export const VECTOR_CANDIDATES_FUNCTION = "memory_vector_candidates";

/** The live memories of the tenant ($2), of one subject if given ($3, $4), embedded by the model. */
const LIVE_OF_MODEL = `m.embedding_model = %1$L AND m.organization_id = $2
        AND m.forgotten_at IS NULL AND m.purged_at IS NULL AND m.superseded_by IS NULL
        AND m.expires_at > pg_catalog.now()
        AND ($3::text IS NULL OR m.subject_fingerprint = $3)
        AND ($4::text IS NULL OR m.subject_type = $4)`;

/** Cosine distance to the query ($1), on the expression the model's HNSW index holds. */
const DISTANCE = "(m.embedding::%2$I.%3$s(%4$s)) OPERATOR(%2$I.<=>) ($1::%2$I.%3$s(%4$s))";

/**
 * Semantic recall's vector list on a server with pgvector (decision 028): the transaction
 * tenant's live memories embedded by `p_model`, nearest the query first, at most `p_depth` — or
 * null when the database has no valid HNSW index for the model, and the caller compares vectors
 * itself (decision 021). The list is ranked by exact cosine distance over three candidate sets:
 * the index's nearest `p_depth` (an iterative scan, so that the tenant and liveness filters
 * applied after the index still leave enough), the tenant's newest `p_newest` (a small
 * organisation in a large shared index is then never short of its own memories), and `p_also`
 * (the full-text candidates). A definer function for the reason `memory_fulltext_candidates` is:
 * `<=>` is not leakproof, so under row-level security the app role could not use the index.
 */
const vectorCandidates = definerFunction({
  name: VECTOR_CANDIDATES_FUNCTION,
  params:
    "p_query real[], p_model text, p_subject_fingerprint text, p_subject_type text, p_also uuid[], p_depth integer, p_newest integer",
  returns: "uuid[]",
  volatility: "VOLATILE", // it sets hnsw.* for the rest of the transaction
  body: `DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_schema text;
  v_index text := ${vectorIndexNameSql("p_model")};
  v_dimensions integer := ${modelDimensionsSql("p_model")};
  v_depth integer := least(greatest(p_depth, 1), 100);
  v_newest integer := least(greatest(p_newest, 0), 1000);
  v_ids uuid[];
BEGIN
  IF v_organization_id IS NULL THEN
    RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
  END IF;
  ${FIND_PGVECTOR}
  IF v_schema IS NULL OR NOT coalesce(${INDEX_VALID}, false) THEN
    RETURN NULL;
  END IF;
  PERFORM pg_catalog.set_config('hnsw.iterative_scan', 'relaxed_order', true);
  PERFORM pg_catalog.set_config('hnsw.ef_search', greatest(v_depth * 2, 40)::text, true);
  EXECUTE pg_catalog.format($q$
    WITH nearest AS MATERIALIZED (
      SELECT m.id FROM public.memories m
      WHERE ${LIVE_OF_MODEL}
      ORDER BY ${DISTANCE}
      LIMIT $5
    ), newest AS (
      SELECT m.id FROM public.memories m
      WHERE ${LIVE_OF_MODEL}
      ORDER BY m.created_at DESC
      LIMIT $6
    )
    SELECT pg_catalog.array_agg(s.id ORDER BY s.distance, s.created_at DESC)
    FROM (
      SELECT m.id, m.created_at, ${DISTANCE} AS distance
      FROM public.memories m
      WHERE m.id IN (SELECT id FROM nearest UNION SELECT id FROM newest UNION SELECT pg_catalog.unnest($7))
        AND ${LIVE_OF_MODEL}
      ORDER BY distance, m.created_at DESC
      LIMIT $5
    ) s$q$, p_model, v_schema, ${vectorTypeSql("v_dimensions")}, v_dimensions)
  INTO v_ids
  USING p_query, v_organization_id, p_subject_fingerprint, p_subject_type, v_depth, v_newest,
        coalesce(p_also, '{}');
  RETURN coalesce(v_ids, '{}');
END`,
});

export const DEFINER_FUNCTIONS: readonly DefinerFunction[] = [
  adminProfiles,
  resolveToken,
  enterAsApiToken,
  purgeMemories,
  adminAudit,
  resolveSession,
  ssoForDomain,
  ssoForOrganization,
  signInMember,
  memberForUser,
  resolveGrant,
  signInRecord,
  toEmbed,
  setEmbedding,
  fulltextCandidates,
  ensureVectorIndex,
  vectorCandidates,
  memberOverview,
  adminApiTokens,
  adminRevokeToken,
];
