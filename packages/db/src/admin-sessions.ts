import { createHash, randomBytes } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import { definerFunction } from "./definer.ts";
import { adminSessions } from "./schema/index.ts";
import type { Tenant } from "./tenant.ts";

const SESSION_ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** SHA-256 hex of a session id: the only form in which the database holds it. */
export function hashSessionId(sessionId: string): string {
  return createHash("sha256").update(sessionId, "utf8").digest("hex");
}

/** 256 random bits, base64url: session ids and CSRF tokens alike. */
const randomSecret = () => randomBytes(32).toString("base64url");

export interface OpenSessionParams {
  /** The API token the manager signed in with; null when they signed in through the IdP. */
  tokenId: string | null;
  /** Seconds without a request after which the session ends. */
  idleTimeoutS: number;
  /** Seconds after sign-in after which the session ends whatever the activity. */
  absoluteTimeoutS: number;
}

export interface OpenedSession {
  /** The cookie value, returned once; only its hash is stored. */
  sessionId: string;
  csrfToken: string;
}

/**
 * Opens a console session for the tenant's member (who must be the token's holder), in the
 * tenant transaction, so RLS keeps it to their own rows.
 */
export async function openAdminSession(
  tx: Tx,
  tenant: Tenant,
  params: OpenSessionParams,
): Promise<OpenedSession> {
  const sessionId = randomSecret();
  const csrfToken = randomSecret();
  await tx.insert(adminSessions).values({
    sessionHash: hashSessionId(sessionId),
    organizationId: tenant.organizationId,
    userId: tenant.userId,
    tokenId: params.tokenId,
    csrfToken,
    idleTimeoutS: params.idleTimeoutS,
    expiresAt: sql`now() + make_interval(secs => ${params.absoluteTimeoutS})`,
  });
  return { sessionId, csrfToken };
}

export interface ResolvedSession {
  /** The row id (not the secret), for ending it. */
  sessionRowId: string;
  organizationId: string;
  userId: string;
  tokenId: string | null;
  csrfToken: string;
}

/**
 * The live session behind a presented id, or null (malformed, unknown, ended, idle too long,
 * past its absolute expiry, its token revoked or expired, its member no longer a manager).
 * Runs on the app login role through `resolve_admin_session`, which also restarts the idle
 * window, and ends a session that fails a check.
 */
export async function resolveAdminSession(
  db: Database,
  sessionId: string,
): Promise<ResolvedSession | null> {
  if (!SESSION_ID_SHAPE.test(sessionId)) return null;
  const rows = await db.execute<{
    session_id: string;
    organization_id: string;
    user_id: string;
    token_id: string;
    csrf_token: string;
  }>(sql`select * from public.resolve_admin_session(${hashSessionId(sessionId)})`);
  const row = rows[0];
  if (!row) return null;
  return {
    sessionRowId: row.session_id,
    organizationId: row.organization_id,
    userId: row.user_id,
    tokenId: row.token_id,
    csrfToken: row.csrf_token,
  };
}

/** Ends one of the tenant member's sessions (sign-out); true if it was live. */
export async function endAdminSession(tx: Tx, params: { sessionRowId: string }): Promise<boolean> {
  const ended = await tx
    .update(adminSessions)
    .set({ endedAt: sql`now()` })
    .where(and(eq(adminSessions.id, params.sessionRowId), isNull(adminSessions.endedAt)))
    .returning({ id: adminSessions.id });
  return ended.length > 0;
}

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
export const resolveSessionDefiner = definerFunction({
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
