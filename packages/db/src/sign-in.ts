import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import * as as from "./schema/authorization-server.ts";
import { members, organizations, ssoConnections, ssoDomains } from "./schema/index.ts";
import { type Tenant, withTenant } from "./tenant.ts";

/** An organisation's identity provider as sign-in needs it; the secret still encrypted. */
export interface SsoConnection {
  organizationId: string;
  issuer: string;
  clientId: string;
  clientSecretEncrypted: string;
}

type SsoRow = {
  organization_id: string;
  issuer: string;
  client_id: string;
  client_secret_encrypted: string;
};

const toConnection = (row: SsoRow | undefined): SsoConnection | null =>
  row
    ? {
        organizationId: row.organization_id,
        issuer: row.issuer,
        clientId: row.client_id,
        clientSecretEncrypted: row.client_secret_encrypted,
      }
    : null;

/** Home-realm discovery: the IdP for an email's domain, if an organisation claimed it. */
export async function ssoConnectionForDomain(
  db: Database,
  domain: string,
): Promise<SsoConnection | null> {
  const rows = await db.execute<SsoRow>(
    sql`select * from public.sso_connection_for_domain(${domain.toLowerCase()})`,
  );
  return toConnection(rows[0]);
}

export async function ssoConnectionForOrganization(
  db: Database,
  organizationId: string,
): Promise<SsoConnection | null> {
  const rows = await db.execute<SsoRow>(
    sql`select * from public.sso_connection_for_organization(${organizationId}::uuid)`,
  );
  return toConnection(rows[0]);
}

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

export interface SetSsoParams {
  organizationId: string;
  issuer: string;
  clientId: string;
  clientSecretEncrypted: string;
  domains: readonly string[];
}

export class DomainTakenError extends Error {
  constructor(readonly domain: string) {
    super(`the domain ${domain} already belongs to another organisation`);
    this.name = "DomainTakenError";
  }
}

/** Creates or replaces an organisation's IdP and its domains, in one transaction. */
export async function setSsoConnection(db: Database, params: SetSsoParams): Promise<void> {
  const domains = [...new Set(params.domains.map((d) => d.toLowerCase()))];
  await db.transaction(async (tx) => {
    const taken = await tx
      .select({ domain: ssoDomains.domain, organizationId: ssoDomains.organizationId })
      .from(ssoDomains)
      .where(inArray(ssoDomains.domain, domains));
    const foreign = taken.find((d) => d.organizationId !== params.organizationId);
    if (foreign) throw new DomainTakenError(foreign.domain);
    await tx
      .insert(ssoConnections)
      .values({
        organizationId: params.organizationId,
        issuer: params.issuer,
        clientId: params.clientId,
        clientSecretEncrypted: params.clientSecretEncrypted,
      })
      .onConflictDoUpdate({
        target: ssoConnections.organizationId,
        set: {
          issuer: params.issuer,
          clientId: params.clientId,
          clientSecretEncrypted: params.clientSecretEncrypted,
          updatedAt: sql`now()`,
        },
      });
    await tx.delete(ssoDomains).where(eq(ssoDomains.organizationId, params.organizationId));
    await tx
      .insert(ssoDomains)
      .values(domains.map((domain) => ({ domain, organizationId: params.organizationId })));
  });
}

export interface SsoSummary {
  issuer: string;
  clientId: string;
  domains: string[];
}

/** What `north org sso show` prints: never the secret. */
export async function getSsoConnection(
  db: Database,
  organizationId: string,
): Promise<SsoSummary | null> {
  const [row] = await db
    .select({ issuer: ssoConnections.issuer, clientId: ssoConnections.clientId })
    .from(ssoConnections)
    .where(eq(ssoConnections.organizationId, organizationId));
  if (!row) return null;
  const domains = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(eq(ssoDomains.organizationId, organizationId))
    .orderBy(ssoDomains.domain);
  return { ...row, domains: domains.map((d) => d.domain) };
}

/** Removes an organisation's IdP (its domains go with it). True when there was one. */
export async function removeSsoConnection(db: Database, organizationId: string): Promise<boolean> {
  const removed = await db
    .delete(ssoConnections)
    .where(eq(ssoConnections.organizationId, organizationId))
    .returning({ organizationId: ssoConnections.organizationId });
  return removed.length > 0;
}

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
