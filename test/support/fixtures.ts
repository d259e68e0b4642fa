import { addMember, createOrganization, type Database, type Tenant } from "@north/db";

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
