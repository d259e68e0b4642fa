import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import * as as from "./schema/authorization-server.ts";
import { members } from "./schema/index.ts";

export interface GrantSummary {
  id: string;
  userId: string;
  clientId: string;
  clientName: string | null;
  scopes: string[];
  createdAt: Date | null;
}

const grantColumns = {
  id: as.oauthConsent.id,
  userId: as.oauthConsent.userId,
  clientId: as.oauthConsent.clientId,
  clientName: as.oauthClient.name,
  scopes: as.oauthConsent.scopes,
  createdAt: as.oauthConsent.createdAt,
};

/**
 * The grants (a member's consent to a client) of an organisation's members, optionally one
 * member's. Runs on the owner connection (CLI) or, for the console, in the tenant transaction,
 * where RLS on `members` keeps it to the tenant's organisation.
 */
export async function listGrants(
  db: Database | Tx,
  params: { organizationId: string; userId?: string },
): Promise<GrantSummary[]> {
  const rows = await db
    .select(grantColumns)
    .from(as.oauthConsent)
    .innerJoin(as.oauthClient, eq(as.oauthClient.clientId, as.oauthConsent.clientId))
    .innerJoin(members, sql`${members.userId}::text = ${as.oauthConsent.userId}`)
    .where(
      and(
        eq(members.organizationId, params.organizationId),
        params.userId ? eq(members.userId, params.userId) : undefined,
      ),
    )
    .orderBy(desc(as.oauthConsent.createdAt));
  return rows.map((r) => ({ ...r, userId: r.userId ?? "" }));
}

export interface RevokedGrant {
  id: string;
  userId: string;
  clientId: string;
}

/**
 * Revokes a grant: the consent goes and every refresh token of that member and client is
 * revoked, so the client must sign in again, and its access tokens fail on the next request
 * (the resource server checks the consent each time). Null when no such grant exists — in the
 * organisation, when one is given.
 */
export async function revokeGrant(
  db: Database | Tx,
  grantId: string,
  organizationId?: string,
): Promise<RevokedGrant | null> {
  const [grant] = await db
    .select({
      id: as.oauthConsent.id,
      userId: as.oauthConsent.userId,
      clientId: as.oauthConsent.clientId,
    })
    .from(as.oauthConsent)
    .innerJoin(members, sql`${members.userId}::text = ${as.oauthConsent.userId}`)
    .where(
      and(
        eq(as.oauthConsent.id, grantId),
        organizationId ? eq(members.organizationId, organizationId) : undefined,
      ),
    );
  if (!grant?.userId) return null;
  await revokeClientAccess(db, grant.userId, grant.clientId);
  return { id: grant.id, userId: grant.userId, clientId: grant.clientId };
}

/** Ends a member's access through one client: consent, refresh and stored access tokens. */
export async function revokeClientAccess(
  db: Database | Tx,
  userId: string,
  clientId: string,
): Promise<void> {
  const mine = (t: typeof as.oauthRefreshToken | typeof as.oauthAccessToken) =>
    and(eq(t.userId, userId), eq(t.clientId, clientId));
  await db
    .delete(as.oauthConsent)
    .where(and(eq(as.oauthConsent.userId, userId), eq(as.oauthConsent.clientId, clientId)));
  await db.delete(as.oauthAccessToken).where(mine(as.oauthAccessToken));
  await db
    .update(as.oauthRefreshToken)
    .set({ revoked: new Date() })
    .where(and(mine(as.oauthRefreshToken), isNull(as.oauthRefreshToken.revoked)));
}

export interface FoundGrant {
  id: string;
  userId: string;
  clientId: string;
  organizationId: string;
}

/**
 * One grant by id with the organisation of its member (owner connection): what `north grant
 * revoke` needs to revoke it in that organisation's name and audit it there. Null when there is
 * no such grant.
 */
export async function findGrant(db: Database | Tx, grantId: string): Promise<FoundGrant | null> {
  const [row] = await db
    .select({
      id: as.oauthConsent.id,
      userId: members.userId,
      clientId: as.oauthConsent.clientId,
      organizationId: members.organizationId,
    })
    .from(as.oauthConsent)
    .innerJoin(members, sql`${members.userId}::text = ${as.oauthConsent.userId}`)
    .where(eq(as.oauthConsent.id, grantId));
  return row ?? null;
}
