import { and, asc, eq } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { members, memories } from "./schema/index.ts";
import { type ProfileEntry, readProfile } from "./working-profile.ts";

/**
 * What `north export` writes for one member (SPEC §5, access requests and portability): their
 * working profile and every memory they wrote — erased ones as tombstones, without a body.
 */
export interface MemberExport {
  userId: string;
  email: string;
  role: "member" | "manager";
  removedAt: Date | null;
  profile: ProfileEntry[];
  memories: Array<{
    id: string;
    kind: string;
    origin: string;
    subjectType: string | null;
    subjectId: string | null;
    body: string | null;
    runId: string;
    createdAt: Date;
    expiresAt: Date;
    forgottenAt: Date | null;
    purgedAt: Date | null;
  }>;
}

/**
 * The organisation's members (or one of them), each with their profile and the memories they
 * wrote, oldest first. Runs in a transaction on the owner connection (the operator's export);
 * RLS would keep the app role to one member's own rows.
 */
export async function exportMembers(
  tx: Tx,
  params: { organizationId: string; userId?: string },
): Promise<MemberExport[]> {
  const found = await tx
    .select({
      userId: members.userId,
      email: members.email,
      role: members.role,
      removedAt: members.removedAt,
    })
    .from(members)
    .where(
      and(
        eq(members.organizationId, params.organizationId),
        params.userId ? eq(members.userId, params.userId) : undefined,
      ),
    )
    .orderBy(asc(members.email));
  const exported: MemberExport[] = [];
  for (const member of found) {
    const owner = { organizationId: params.organizationId, userId: member.userId };
    const profile = await readProfile(tx, { owner });
    const written = await tx
      .select({
        id: memories.id,
        kind: memories.kind,
        origin: memories.origin,
        subjectType: memories.subjectType,
        subjectId: memories.subjectId,
        body: memories.body,
        runId: memories.runId,
        createdAt: memories.createdAt,
        expiresAt: memories.expiresAt,
        forgottenAt: memories.forgottenAt,
        purgedAt: memories.purgedAt,
      })
      .from(memories)
      .where(
        and(
          eq(memories.organizationId, params.organizationId),
          eq(memories.authorId, member.userId),
        ),
      )
      .orderBy(asc(memories.createdAt));
    exported.push({ ...member, profile, memories: written });
  }
  return exported;
}
