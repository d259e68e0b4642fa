import { and, asc, desc, eq, isNull } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { matterScreens, matters, matterTeam, memories } from "./schema/index.ts";

/**
 * The console's reads of matters (SPEC §5a), as the manager on the app role: the policies apply
 * the may-see rule to every memory read here, so a manager screened from a matter sees none of
 * its memories whatever this code asks for.
 */

export interface MatterMemoryRow {
  id: string;
  kind: string;
  origin: string;
  body: string;
  subjectType: string | null;
  subjectId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** A matter's memories that still hold a body, newest first, as the transaction's user may see. */
export async function matterMemories(
  tx: Tx,
  params: { matterId: string; limit?: number },
): Promise<MatterMemoryRow[]> {
  const rows = await tx
    .select({
      id: memories.id,
      kind: memories.kind,
      origin: memories.origin,
      body: memories.body,
      subjectType: memories.subjectType,
      subjectId: memories.subjectId,
      createdAt: memories.createdAt,
      expiresAt: memories.expiresAt,
    })
    .from(memories)
    .where(
      and(
        eq(memories.matterId, params.matterId),
        isNull(memories.forgottenAt),
        isNull(memories.purgedAt),
      ),
    )
    .orderBy(desc(memories.createdAt))
    .limit(params.limit ?? 200);
  return rows.flatMap((r) => (r.body === null ? [] : [{ ...r, body: r.body }]));
}

export interface MemberMatters {
  team: { reference: string; name: string }[];
  screens: { reference: string; name: string; reason: string }[];
}

/** The matters a member is on the team of, and those they are screened from (with the reason). */
export async function memberMatters(
  tx: Tx,
  params: { organizationId: string; userId: string },
): Promise<MemberMatters> {
  const team = await tx
    .select({ reference: matters.reference, name: matters.name })
    .from(matterTeam)
    .innerJoin(matters, eq(matters.id, matterTeam.matterId))
    .where(
      and(
        eq(matterTeam.organizationId, params.organizationId),
        eq(matterTeam.userId, params.userId),
      ),
    )
    .orderBy(asc(matters.reference));
  const screens = await tx
    .select({ reference: matters.reference, name: matters.name, reason: matterScreens.reason })
    .from(matterScreens)
    .innerJoin(matters, eq(matters.id, matterScreens.matterId))
    .where(
      and(
        eq(matterScreens.organizationId, params.organizationId),
        eq(matterScreens.userId, params.userId),
      ),
    )
    .orderBy(asc(matters.reference));
  return { team, screens };
}
