import { addMember, createOrganization, type Database, type Tenant } from "@north/db";
import type { Sql } from "postgres";

export interface Workspace {
  organizationId: string;
  manager: Tenant;
  member: Tenant;
}

let counter = 0;

/** An organization with one manager and one ordinary member, written as the operator would. */
export async function createWorkspace(owner: Database, name = "Firm"): Promise<Workspace> {
  counter += 1;
  const org = await createOrganization(owner, { name: `${name} ${counter}` });
  const manager = await addMember(owner, {
    organizationId: org.id,
    email: `manager${counter}@example.test`,
    role: "manager",
  });
  const member = await addMember(owner, {
    organizationId: org.id,
    email: `member${counter}@example.test`,
  });
  return {
    organizationId: org.id,
    manager: { organizationId: org.id, userId: manager.userId },
    member: { organizationId: org.id, userId: member.userId },
  };
}

/**
 * The same workspace written in plain SQL with only the columns every release has had, for
 * suites that seed a database migrated to an older release (whose tables lack newer columns).
 */
export async function createWorkspaceOnOldSchema(sql: Sql, name = "Old firm"): Promise<Workspace> {
  counter += 1;
  const [org] = await sql<{ id: string }[]>`
    insert into organizations (name) values (${`${name} ${counter}`}) returning id`;
  const organizationId = org?.id ?? "";
  const add = async (email: string, role: string) => {
    const [row] = await sql<{ user_id: string }[]>`
      insert into members (organization_id, email, role)
      values (${organizationId}, ${email}, ${role}) returning user_id`;
    return { organizationId, userId: row?.user_id ?? "" };
  };
  return {
    organizationId,
    manager: await add(`old-manager${counter}@example.test`, "manager"),
    member: await add(`old-member${counter}@example.test`, "member"),
  };
}
