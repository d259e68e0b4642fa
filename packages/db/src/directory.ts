import { and, eq } from "drizzle-orm";
import type { Database } from "./client.ts";
import { type MemberRole, members, organizations } from "./schema/index.ts";

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

export async function addMember(db: Database, params: AddMemberParams) {
  const [row] = await db
    .insert(members)
    .values({
      organizationId: params.organizationId,
      email: params.email.trim(),
      role: params.role ?? "member",
    })
    .returning({
      userId: members.userId,
      organizationId: members.organizationId,
      role: members.role,
    });
  if (!row) throw new Error("insert returned no member");
  return row;
}

/** The role a user holds in an organization, or undefined when they are not a member. */
export async function findMemberRole(
  db: Database,
  params: { organizationId: string; userId: string },
): Promise<MemberRole | undefined> {
  const [row] = await db
    .select({ role: members.role })
    .from(members)
    .where(
      and(eq(members.organizationId, params.organizationId), eq(members.userId, params.userId)),
    );
  return row?.role;
}
