import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import { normalizedEmailSql, normalizeEmail } from "./email.ts";
import { endAdminGrants, endMemberOAuth } from "./grant-records.ts";
import {
  apiTokens,
  type MemberRole,
  members,
  memories,
  type OrganizationLanguage,
  organizations,
} from "./schema/index.ts";

/**
 * Operator-side writes: organizations and memberships. They run on the owner connection (the
 * operator CLI), never on the app login role, which can only read its own organization.
 */
export async function createOrganization(db: Database, params: { name: string }) {
  const [row] = await db
    .insert(organizations)
    .values({ name: params.name })
    .returning({ id: organizations.id, name: organizations.name });
  if (!row) throw new Error("insert returned no organization");
  return row;
}

export interface AddMemberParams {
  organizationId: string;
  email: string;
  role?: MemberRole;
}

const memberColumns = {
  userId: members.userId,
  organizationId: members.organizationId,
  role: members.role,
};

/**
 * Adds a member; the email of a removed member (compared after the one email normalisation,
 * email.ts) reinstates that member (same user id, profile and memories intact, the given role;
 * their old tokens stay revoked). An active member with the email fails on the unique index
 * (23505), as does a look-alike of any member's email (the index is on `lower(email)`, which is
 * stricter). Given a transaction, the change joins it (the CLI writes its audit row beside it).
 */
export async function addMember(db: Database | Tx, params: AddMemberParams) {
  const email = params.email.trim();
  const role = params.role ?? "member";
  const [reinstated] = await db
    .update(members)
    .set({ removedAt: null, role })
    .where(
      and(
        eq(members.organizationId, params.organizationId),
        sql`${sql.raw(normalizedEmailSql("members.email"))} = ${normalizeEmail(email)}`,
        sql`${members.removedAt} is not null`,
      ),
    )
    .returning(memberColumns);
  if (reinstated) return { ...reinstated, reinstated: true };
  const [row] = await db
    .insert(members)
    .values({ organizationId: params.organizationId, email, role })
    .returning(memberColumns);
  if (!row) throw new Error("insert returned no member");
  return { ...row, reinstated: false };
}

export async function organizationExists(db: Database, organizationId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  return row !== undefined;
}

/**
 * Sets an organisation's language (decision 018) and re-stems, in the same transaction, its
 * memories written under another one: `search` is generated from `memories.language`, so
 * updating that column is the re-indexing, and recall never compares a query stemmed one way
 * with memories stemmed another. Null when there is no such organisation.
 */
export async function setOrganizationLanguage(
  tx: Tx,
  params: { organizationId: string; language: OrganizationLanguage },
): Promise<{ previous: OrganizationLanguage; memoriesRestemmed: number } | null> {
  const [before] = await tx
    .select({ language: organizations.language })
    .from(organizations)
    .where(eq(organizations.id, params.organizationId))
    .for("update");
  if (!before) return null;
  await tx
    .update(organizations)
    .set({ language: params.language })
    .where(eq(organizations.id, params.organizationId));
  const [restemmed] = await tx.execute<{ n: number }>(sql`
    with restemmed as (
      update ${memories} set language = ${params.language}
      where organization_id = ${params.organizationId} and language <> ${params.language}
      returning 1)
    select count(*)::int as n from restemmed`);
  return { previous: before.language, memoriesRestemmed: Number(restemmed?.n ?? 0) };
}

/** Every organization with its language and count of active members, oldest first. */
export async function listOrganizations(db: Database) {
  return db
    .select({
      id: organizations.id,
      name: organizations.name,
      language: organizations.language,
      createdAt: organizations.createdAt,
      members: sql<number>`(select count(*)::int from ${members} m
        where m.organization_id = ${organizations.id} and m.removed_at is null)`,
    })
    .from(organizations)
    .orderBy(asc(organizations.createdAt));
}

/** Every member of an organization, removed ones included (with `removedAt`), by email. */
export async function listMembers(db: Database | Tx, params: { organizationId: string }) {
  return db
    .select({
      userId: members.userId,
      email: members.email,
      role: members.role,
      createdAt: members.createdAt,
      removedAt: members.removedAt,
    })
    .from(members)
    .where(eq(members.organizationId, params.organizationId))
    .orderBy(sql`lower(${members.email})`);
}

export type MemberChange =
  | { found: false }
  | { found: true; email: string; role: MemberRole; tokensRevoked: number };

/**
 * Removes an active member: marks them removed, revokes every API token they hold and ends
 * their OAuth grants, refresh tokens and sign-in sessions, in one transaction, so their next
 * request fails and a later reinstatement starts from nothing. `found: false` when no active member matches.
 */
export async function removeMember(
  db: Database | Tx,
  params: { organizationId: string; userId: string },
): Promise<MemberChange> {
  return db.transaction(async (tx) => {
    const [member] = await tx
      .update(members)
      .set({ removedAt: sql`now()` })
      .where(and(memberKey(params), isNull(members.removedAt)))
      .returning({ email: members.email, role: members.role });
    if (!member) return { found: false };
    // OAuth access ends in the same transaction: reinstating the member revives none of it.
    await endMemberOAuth(tx, params.userId);
    return { found: true, ...member, tokensRevoked: await revokeMemberTokens(tx, params) };
  });
}

/**
 * Changes an active member's role. Demoting a manager revokes their tokens that carry the
 * `admin` scope, which only managers may hold, and ends their OAuth grants that hold it.
 */
export async function setMemberRole(
  db: Database | Tx,
  params: { organizationId: string; userId: string; role: MemberRole },
): Promise<MemberChange> {
  return db.transaction(async (tx) => {
    const [member] = await tx
      .update(members)
      .set({ role: params.role })
      .where(and(memberKey(params), isNull(members.removedAt)))
      .returning({ email: members.email, role: members.role });
    if (!member) return { found: false };
    if (params.role === "manager") return { found: true, ...member, tokensRevoked: 0 };
    // OAuth grants holding admin end too: a later promotion must not make them admin again.
    await endAdminGrants(tx, params.userId);
    return { found: true, ...member, tokensRevoked: await revokeMemberTokens(tx, params, "admin") };
  });
}

function memberKey(params: { organizationId: string; userId: string }) {
  return and(eq(members.organizationId, params.organizationId), eq(members.userId, params.userId));
}

/** The role a user holds in an organization, or undefined when they are not an active member. */
export async function findMemberRole(
  db: Database,
  params: { organizationId: string; userId: string },
): Promise<MemberRole | undefined> {
  const [row] = await db
    .select({ role: members.role })
    .from(members)
    .where(and(memberKey(params), isNull(members.removedAt)));
  return row?.role;
}

/** Revokes a member's live tokens — only those carrying `scope`, when given — and counts them. */
async function revokeMemberTokens(
  tx: Tx,
  member: { organizationId: string; userId: string },
  scope?: string,
): Promise<number> {
  const revoked = await tx
    .update(apiTokens)
    .set({ revokedAt: sql`now()` })
    .where(
      and(
        eq(apiTokens.organizationId, member.organizationId),
        eq(apiTokens.userId, member.userId),
        isNull(apiTokens.revokedAt),
        scope ? sql`${scope} = any(${apiTokens.scopes})` : undefined,
      ),
    )
    .returning({ id: apiTokens.id });
  return revoked.length;
}
