import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import { definerFunction } from "./definer.ts";
import * as as from "./schema/authorization-server.ts";
import { oauthGrants, type SignInMethod, signInSessions } from "./schema/grant-records.ts";
import { TOKEN_LIVE, TOKEN_SIGN_IN_ALLOWED } from "./sign-in.ts";

/**
 * North's server-side records of sign-in (decision 029): how each authorization-server browser
 * session was authenticated, and what opened each grant. Every limit on a grant is read from
 * here; nothing the browser holds can widen or extend one.
 */

/** How a browser session was authenticated, and — for a pasted API token — its cap. */
export type SignInRecord =
  | { organizationId: string; userId: string; method: "idp" }
  | {
      organizationId: string;
      userId: string;
      method: "api_token";
      apiTokenId: string;
      /** The token's scopes: the most a grant opened in this session may carry. */
      scopeCap: readonly string[];
    };

const tokenColumns = (record: SignInRecord) =>
  record.method === "api_token"
    ? { apiTokenId: record.apiTokenId, scopeCap: [...record.scopeCap] }
    : { apiTokenId: null, scopeCap: null };

/** Records how the session `sessionId` (the library's) was opened. */
export async function recordSignInSession(
  db: Database,
  sessionId: string,
  record: SignInRecord,
): Promise<void> {
  await db.insert(signInSessions).values({
    sessionId,
    organizationId: record.organizationId,
    userId: record.userId,
    method: record.method,
    ...tokenColumns(record),
  });
}

/**
 * The record of a live library session of `userId`, or null: no record, no grant. Null too once
 * a pasted API token that opened the session is revoked or expires, or its organisation gets an
 * IdP (`sign_in_session_record`, a definer function: the app role cannot read API tokens).
 */
export async function signInRecordFor(
  db: Database,
  sessionId: string,
  userId: string,
): Promise<SignInRecord | null> {
  const rows = await db.execute<{
    organization_id: string;
    method: SignInMethod;
    api_token_id: string | null;
    scope_cap: string[] | null;
  }>(sql`select * from public.sign_in_session_record(${sessionId}, ${userId}::uuid)`);
  const row = rows[0];
  if (!row) return null;
  const organizationId = row.organization_id;
  if (row.method === "idp") return { organizationId, userId, method: "idp" };
  if (!row.api_token_id || !row.scope_cap) return null;
  return {
    organizationId,
    userId,
    method: "api_token",
    apiTokenId: row.api_token_id,
    scopeCap: row.scope_cap,
  };
}

/** Ends a library browser session (its record goes with it): North's sign-out. */
export async function endBrowserSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(as.session).where(eq(as.session.id, sessionId));
}

/**
 * Opens the grant a consent just recorded for `record`'s member and `clientId`: any earlier
 * grant of theirs to that client ends (its refresh and stored access tokens with it; its access
 * tokens carry the old grant's id and are refused from now on), and a new one starts, bound to
 * the way the member signed in, ending `lifetimeS` from now. One transaction. False when the
 * library holds no consent for the pair (then nothing is granted).
 */
export async function replaceGrant(
  db: Database,
  params: { clientId: string; record: SignInRecord; lifetimeS: number },
): Promise<boolean> {
  const { record, clientId } = params;
  return db.transaction(async (tx) => {
    // Locked: two tabs allowing the same client at once replace the grant one after the other.
    const [consent] = await tx
      .select({ id: as.oauthConsent.id })
      .from(as.oauthConsent)
      .where(and(eq(as.oauthConsent.userId, record.userId), eq(as.oauthConsent.clientId, clientId)))
      .for("update");
    if (!consent) return false;
    await tx
      .delete(oauthGrants)
      .where(and(eq(oauthGrants.userId, record.userId), eq(oauthGrants.clientId, clientId)));
    await endClientTokens(tx, record.userId, clientId);
    await tx.insert(oauthGrants).values({
      consentId: consent.id,
      organizationId: record.organizationId,
      userId: record.userId,
      clientId,
      method: record.method,
      ...tokenColumns(record),
      expiresAt: sql`now() + make_interval(secs => ${params.lifetimeS})`,
    });
    return true;
  });
}

/** The id of the member's current grant to a client: what its access tokens carry. */
export async function currentGrantId(
  db: Database,
  userId: string,
  clientId: string,
): Promise<string | null> {
  const [row] = await db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.clientId, clientId)));
  return row?.id ?? null;
}

/** When the member's current grant to a client started (its consent), or null when none. */
export async function grantStartedAt(
  db: Database,
  userId: string,
  clientId: string,
): Promise<Date | null> {
  const [row] = await db
    .select({ grantedAt: oauthGrants.grantedAt })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.clientId, clientId)));
  return row?.grantedAt ?? null;
}

/** How the member's current grant to a client was opened, or null when there is none. */
export async function grantRecordFor(
  db: Database,
  userId: string,
  clientId: string,
): Promise<SignInRecord | null> {
  const [row] = await db
    .select({
      organizationId: oauthGrants.organizationId,
      method: oauthGrants.method,
      apiTokenId: oauthGrants.apiTokenId,
      scopeCap: oauthGrants.scopeCap,
    })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.userId, userId), eq(oauthGrants.clientId, clientId)));
  if (!row) return null;
  if (row.method === "idp") return { organizationId: row.organizationId, userId, method: "idp" };
  if (!row.apiTokenId || !row.scopeCap) return null;
  return {
    ...row,
    userId,
    method: "api_token",
    apiTokenId: row.apiTokenId,
    scopeCap: row.scopeCap,
  };
}

/** Whether two sign-ins are the same way in: the method, and for a token the same token and cap. */
export function sameSignIn(a: SignInRecord, b: SignInRecord): boolean {
  if (a.method === "idp" || b.method === "idp") return a.method === b.method;
  return (
    a.apiTokenId === b.apiTokenId &&
    a.scopeCap.length === b.scopeCap.length &&
    a.scopeCap.every((scope) => b.scopeCap.includes(scope))
  );
}

/**
 * Ends the member's grants that hold `admin` (consents, their records, refresh and stored access
 * tokens): demoting a manager must leave no connector that becomes admin again on re-promotion.
 * Run in the transaction that changes the role.
 */
export async function endAdminGrants(db: Database | Tx, userId: string): Promise<void> {
  const ended = await db
    .delete(as.oauthConsent)
    .where(and(eq(as.oauthConsent.userId, userId), sql`'admin' = any(${as.oauthConsent.scopes})`))
    .returning({ clientId: as.oauthConsent.clientId });
  for (const { clientId } of ended) await endClientTokens(db, userId, clientId);
}

/** Revokes the member's refresh tokens for a client and deletes its stored access tokens. */
async function endClientTokens(db: Database | Tx, userId: string, clientId: string) {
  await db
    .delete(as.oauthAccessToken)
    .where(and(eq(as.oauthAccessToken.userId, userId), eq(as.oauthAccessToken.clientId, clientId)));
  await db
    .update(as.oauthRefreshToken)
    .set({ revoked: new Date() })
    .where(
      and(
        eq(as.oauthRefreshToken.userId, userId),
        eq(as.oauthRefreshToken.clientId, clientId),
        isNull(as.oauthRefreshToken.revoked),
      ),
    );
}

/**
 * Refresh rotation never extends a grant: every live refresh token of the member and client
 * ends no later than the grant does (the library gives each rotation a fresh lifetime).
 */
export async function clipRefreshTokens(
  db: Database,
  userId: string,
  clientId: string,
): Promise<void> {
  await db.execute(sql`
    update north_auth.oauth_refresh_token rt
    set expires_at = g.expires_at
    from north_auth.oauth_grant g
    where g.user_id = ${userId}::uuid and g.client_id = ${clientId}
      and rt.user_id = ${userId} and rt.client_id = ${clientId}
      and rt.revoked is null
      and (rt.expires_at is null or rt.expires_at > g.expires_at)`);
}

/**
 * Ends every way a member reaches North through OAuth: consents (their grant records go with
 * them), refresh and stored access tokens, and browser sessions. Run in the transaction that
 * removes the member, so reinstating them later brings none of it back.
 */
export async function endMemberOAuth(db: Database | Tx, userId: string): Promise<void> {
  await db.delete(as.oauthConsent).where(eq(as.oauthConsent.userId, userId));
  await db.delete(as.oauthAccessToken).where(eq(as.oauthAccessToken.userId, userId));
  await db
    .update(as.oauthRefreshToken)
    .set({ revoked: new Date() })
    .where(and(eq(as.oauthRefreshToken.userId, userId), isNull(as.oauthRefreshToken.revoked)));
  await db.delete(as.session).where(eq(as.session.userId, userId));
}

export const SIGN_IN_RECORD_FUNCTION = "sign_in_session_record";

/**
 * North's record of a live authorization-server browser session of `p_user_id` (decision 029):
 * how it signed in and, for a pasted API token, the token and its scopes — only while that
 * token is neither revoked nor expired and its organisation has no IdP, so a session opened
 * with a token that has since been revoked mints nothing more. A lookup by the session id the
 * library resolved from the browser's own cookie; one row at most.
 */
export const signInRecordDefiner = definerFunction({
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
