import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { normalizedEmailSql, normalizeEmail } from "./email.ts";
import { addScreen } from "./matters.ts";
import { type MatterAccess, matterScreens, matters, matterTeam, members } from "./schema/index.ts";

/**
 * What `north matter import` needs beyond the one-at-a-time writes of matters.ts: members by
 * email, and a matter's description, team and screens set to exactly what a conflicts system's
 * export states, reporting whether anything changed (so a second import changes nothing).
 */

/** Active members of the organisation by normalised email (for imports), and the unknown ones. */
export async function membersByEmail(
  tx: Tx,
  params: { organizationId: string; emails: readonly string[] },
): Promise<{ found: Map<string, string>; unknown: string[] }> {
  const wanted = [...new Set(params.emails.map(normalizeEmail))];
  const rows =
    wanted.length === 0
      ? []
      : await tx
          .select({
            userId: members.userId,
            email: sql<string>`${sql.raw(normalizedEmailSql("members.email"))}`,
          })
          .from(members)
          .where(
            and(
              eq(members.organizationId, params.organizationId),
              isNull(members.removedAt),
              inArray(sql`${sql.raw(normalizedEmailSql("members.email"))}`, wanted),
            ),
          );
  const found = new Map(rows.map((r) => [r.email, r.userId]));
  return { found, unknown: wanted.filter((email) => !found.has(email)) };
}

/** Sets a matter's team or screens to exactly these members; returns how many rows changed. */
export async function replaceTeam(
  tx: Tx,
  params: { organizationId: string; matterId: string; userIds: readonly string[] },
): Promise<number> {
  const current = await tx
    .select({ userId: matterTeam.userId })
    .from(matterTeam)
    .where(eq(matterTeam.matterId, params.matterId));
  const have = new Set(current.map((r) => r.userId));
  const want = new Set(params.userIds);
  const gone = [...have].filter((id) => !want.has(id));
  const fresh = [...want].filter((id) => !have.has(id));
  if (gone.length > 0) {
    await tx
      .delete(matterTeam)
      .where(and(eq(matterTeam.matterId, params.matterId), inArray(matterTeam.userId, gone)));
  }
  if (fresh.length > 0) {
    await tx.insert(matterTeam).values(
      fresh.map((userId) => ({
        organizationId: params.organizationId,
        matterId: params.matterId,
        userId,
      })),
    );
  }
  return gone.length + fresh.length;
}

/** Sets a matter's screens to exactly these, with their reasons; returns how many changed. */
export async function replaceScreens(
  tx: Tx,
  params: {
    organizationId: string;
    matterId: string;
    screens: readonly { userId: string; reason: string }[];
  },
): Promise<number> {
  const current = await tx
    .select({ userId: matterScreens.userId, reason: matterScreens.reason })
    .from(matterScreens)
    .where(eq(matterScreens.matterId, params.matterId));
  const want = new Map(params.screens.map((s) => [s.userId, s.reason.trim()]));
  const gone = current.filter((r) => !want.has(r.userId)).map((r) => r.userId);
  let changed = gone.length;
  if (gone.length > 0) {
    await tx
      .delete(matterScreens)
      .where(and(eq(matterScreens.matterId, params.matterId), inArray(matterScreens.userId, gone)));
  }
  const had = new Map(current.map((r) => [r.userId, r.reason]));
  for (const [userId, reason] of want) {
    if (had.get(userId) === reason) continue;
    const result = await addScreen(tx, {
      organizationId: params.organizationId,
      matterId: params.matterId,
      userId,
      reason,
    });
    if (result.ok && result.changed) changed++;
  }
  return changed;
}

/** Updates a matter's name, client and access to these; returns whether anything changed. */
export async function updateMatter(
  tx: Tx,
  params: { matterId: string; name: string; client?: string; access: MatterAccess },
): Promise<boolean> {
  const name = params.name.trim();
  const client = params.client?.trim() || null;
  const updated = await tx
    .update(matters)
    .set({ name, client, access: params.access })
    .where(
      and(
        eq(matters.id, params.matterId),
        sql`(${matters.name}, ${matters.client}, ${matters.access}) is distinct from (${name}, ${client}::text, ${params.access})`,
      ),
    )
    .returning({ id: matters.id });
  return updated.length > 0;
}
