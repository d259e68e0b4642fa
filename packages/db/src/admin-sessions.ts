import { createHash, randomBytes } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
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
