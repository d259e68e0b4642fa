import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import * as as from "./schema/authorization-server.ts";
import { oauthGrants, type SignInMethod, signInSessions } from "./schema/grant-records.ts";

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

function toRecord(row: {
  organizationId: string;
  userId: string;
  method: SignInMethod;
  apiTokenId: string | null;
  scopeCap: string[] | null;
}): SignInRecord | null {
  if (row.method === "idp") {
    return { organizationId: row.organizationId, userId: row.userId, method: "idp" };
  }
  if (!row.apiTokenId || !row.scopeCap) return null;
  return { ...row, method: "api_token", apiTokenId: row.apiTokenId, scopeCap: row.scopeCap };
}

const recordColumns = {
  organizationId: signInSessions.organizationId,
  userId: signInSessions.userId,
  method: signInSessions.method,
  apiTokenId: signInSessions.apiTokenId,
  scopeCap: signInSessions.scopeCap,
};

/** The record of a live library session of `userId`, or null: no record, no grant. */
export async function signInRecordFor(
  db: Database,
  sessionId: string,
  userId: string,
): Promise<SignInRecord | null> {
  const [row] = await db
    .select(recordColumns)
    .from(signInSessions)
    .innerJoin(as.session, eq(as.session.id, signInSessions.sessionId))
    .where(
      and(
        eq(signInSessions.sessionId, sessionId),
        eq(signInSessions.userId, userId),
        sql`${as.session.expiresAt} > now()`,
      ),
    );
  return row ? toRecord(row) : null;
}

/** Ends a library browser session (its record goes with it): North's sign-out. */
export async function endBrowserSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(as.session).where(eq(as.session.id, sessionId));
}

/**
 * Records the grant a consent just opened for `record`'s member and `clientId`: the library's
 * consent row, the way the member signed in, and its end, `lifetimeS` from now. False when the
 * library holds no consent for the pair (then nothing is granted).
 */
export async function openGrant(
  db: Database,
  params: { clientId: string; record: SignInRecord; lifetimeS: number },
): Promise<boolean> {
  const { record, clientId } = params;
  const [consent] = await db
    .select({ id: as.oauthConsent.id })
    .from(as.oauthConsent)
    .where(and(eq(as.oauthConsent.userId, record.userId), eq(as.oauthConsent.clientId, clientId)));
  if (!consent) return false;
  await db
    .insert(oauthGrants)
    .values({
      consentId: consent.id,
      organizationId: record.organizationId,
      userId: record.userId,
      clientId,
      method: record.method,
      ...tokenColumns(record),
      expiresAt: sql`now() + make_interval(secs => ${params.lifetimeS})`,
    })
    .onConflictDoNothing();
  return true;
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
