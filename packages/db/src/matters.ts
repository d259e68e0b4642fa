import { and, asc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { definerFunction } from "./definer.ts";
import {
  MATTER_REFERENCE_PATTERN,
  type MatterAccess,
  matterScreens,
  matters,
  matterTeam,
  members,
  memories,
} from "./schema/index.ts";

/**
 * Matters, their teams, screens and legal holds (SPEC §5a). The operator's writes run on the
 * owner connection inside `withOrganization` (the CLI writes its audit row beside them); the
 * app role reads a matter only to resolve a reference its user may see ({@link visibleMatter}).
 */

const REFERENCE = new RegExp(MATTER_REFERENCE_PATTERN);

/** Whether `value` has the shape of a matter reference (SPEC §5a): the one test of it. */
export const isMatterReference = (value: string): boolean => REFERENCE.test(value);

/** Why a field is refused, or undefined: one line, naming the field, never echoing its value. */
export function matterFieldProblem(
  field: "reference" | "name" | "client" | "reason",
  value: string | undefined,
): string | undefined {
  if (field === "reference") {
    return value !== undefined && isMatterReference(value)
      ? undefined
      : "the reference must be 1–64 characters of letters, digits and . _ / -";
  }
  const max = field === "name" || field === "client" ? 200 : 500;
  const length = value === undefined ? 0 : [...value.trim()].length;
  return length >= 1 && length <= max ? undefined : `the ${field} must be 1–${max} characters`;
}

export interface MatterRow {
  id: string;
  reference: string;
  name: string;
  client: string | null;
  access: MatterAccess;
  hold: { reason: string; since: Date } | null;
}

const matterColumns = {
  id: matters.id,
  reference: matters.reference,
  name: matters.name,
  client: matters.client,
  access: matters.access,
  holdReason: matters.holdReason,
  heldSince: matters.heldSince,
};

type MatterColumns = {
  id: string;
  reference: string;
  name: string;
  client: string | null;
  access: MatterAccess;
  holdReason: string | null;
  heldSince: Date | null;
};

const toMatter = (row: MatterColumns): MatterRow => ({
  id: row.id,
  reference: row.reference,
  name: row.name,
  client: row.client,
  access: row.access,
  hold:
    row.holdReason !== null && row.heldSince !== null
      ? { reason: row.holdReason, since: row.heldSince }
      : null,
});

const sameReference = (reference: string) => sql`lower(${matters.reference}) = lower(${reference})`;

/** The matter of `organizationId` with this reference, compared case-insensitively. */
export async function findMatter(
  tx: Tx,
  params: { organizationId: string; reference: string },
): Promise<MatterRow | undefined> {
  const [row] = await tx
    .select(matterColumns)
    .from(matters)
    .where(and(eq(matters.organizationId, params.organizationId), sameReference(params.reference)));
  return row ? toMatter(row) : undefined;
}

/** Creates a matter; a reference already taken (whatever its case) fails on the unique index. */
export async function createMatter(
  tx: Tx,
  params: {
    organizationId: string;
    reference: string;
    name: string;
    client?: string;
    access: MatterAccess;
  },
): Promise<MatterRow> {
  const [row] = await tx
    .insert(matters)
    .values({
      organizationId: params.organizationId,
      reference: params.reference,
      name: params.name.trim(),
      client: params.client?.trim() || null,
      access: params.access,
    })
    .returning(matterColumns);
  if (!row) throw new Error("insert returned no matter");
  return toMatter(row);
}

export interface MatterSummary extends MatterRow {
  teamSize: number;
  screens: number;
  memories: number;
}

/**
 * Every matter of the organisation, by reference, with its team size, screens and how many
 * memories it holds (still holding a body). Read as the owner (the operator) or as a manager
 * through the console's own reads; counts only, never a memory.
 */
export async function listMatters(
  tx: Tx,
  params: { organizationId: string },
): Promise<MatterSummary[]> {
  const rows = await tx
    .select({
      ...matterColumns,
      // Qualified by hand: Drizzle writes a column of the one table selected from without it,
      // and inside these subqueries a bare "id" would be the inner table's.
      teamSize: sql<number>`(select count(*)::int from ${matterTeam} t where t.matter_id = "matters"."id")`,
      screens: sql<number>`(select count(*)::int from ${matterScreens} s where s.matter_id = "matters"."id")`,
      memories: sql<number>`(select count(*)::int from ${memories} m where m.matter_id = "matters"."id" and m.forgotten_at is null and m.purged_at is null)`,
    })
    .from(matters)
    .where(eq(matters.organizationId, params.organizationId))
    .orderBy(asc(sql`lower(${matters.reference})`));
  return rows.map((r) => ({
    ...toMatter(r),
    teamSize: Number(r.teamSize),
    screens: Number(r.screens),
    memories: Number(r.memories),
  }));
}

export interface MatterDetail extends MatterRow {
  team: { userId: string; email: string }[];
  screens: { userId: string; email: string; reason: string }[];
  memories: number;
}

/** One matter as `north matter show` prints it. */
export async function matterDetail(
  tx: Tx,
  params: { organizationId: string; reference: string },
): Promise<MatterDetail | undefined> {
  const matter = await findMatter(tx, params);
  if (!matter) return undefined;
  const team = await tx
    .select({ userId: matterTeam.userId, email: members.email })
    .from(matterTeam)
    .innerJoin(
      members,
      and(
        eq(members.organizationId, matterTeam.organizationId),
        eq(members.userId, matterTeam.userId),
      ),
    )
    .where(eq(matterTeam.matterId, matter.id))
    .orderBy(asc(members.email));
  const screens = await tx
    .select({ userId: matterScreens.userId, email: members.email, reason: matterScreens.reason })
    .from(matterScreens)
    .innerJoin(
      members,
      and(
        eq(members.organizationId, matterScreens.organizationId),
        eq(members.userId, matterScreens.userId),
      ),
    )
    .where(eq(matterScreens.matterId, matter.id))
    .orderBy(asc(members.email));
  const [count] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(memories)
    .where(
      and(
        eq(memories.matterId, matter.id),
        isNull(memories.forgottenAt),
        isNull(memories.purgedAt),
      ),
    );
  return { ...matter, team, screens, memories: Number(count?.n ?? 0) };
}

/** Whether `userId` is an active member of the organisation. */
async function isActiveMember(tx: Tx, organizationId: string, userId: string) {
  const [row] = await tx
    .select({ userId: members.userId })
    .from(members)
    .where(
      and(
        eq(members.organizationId, organizationId),
        eq(members.userId, userId),
        isNull(members.removedAt),
      ),
    );
  return row !== undefined;
}

export type MembershipChange =
  | { ok: true; changed: boolean }
  | { ok: false; problem: "not_member" | "not_on_team" | "not_screened" };

/** Puts a member on a matter's team (a no-op if they are on it already). */
export async function addToTeam(
  tx: Tx,
  params: { organizationId: string; matterId: string; userId: string },
): Promise<MembershipChange> {
  if (!(await isActiveMember(tx, params.organizationId, params.userId))) {
    return { ok: false, problem: "not_member" };
  }
  const added = await tx
    .insert(matterTeam)
    .values(params)
    .onConflictDoNothing()
    .returning({ userId: matterTeam.userId });
  return { ok: true, changed: added.length > 0 };
}

/** Takes a member off a matter's team; refused when they are not on it. */
export async function removeFromTeam(
  tx: Tx,
  params: { organizationId: string; matterId: string; userId: string },
): Promise<MembershipChange> {
  const removed = await tx
    .delete(matterTeam)
    .where(and(eq(matterTeam.matterId, params.matterId), eq(matterTeam.userId, params.userId)))
    .returning({ userId: matterTeam.userId });
  return removed.length > 0 ? { ok: true, changed: true } : { ok: false, problem: "not_on_team" };
}

/** Screens a member from a matter with a reason (a new reason replaces the old one). */
export async function addScreen(
  tx: Tx,
  params: { organizationId: string; matterId: string; userId: string; reason: string },
): Promise<MembershipChange> {
  if (!(await isActiveMember(tx, params.organizationId, params.userId))) {
    return { ok: false, problem: "not_member" };
  }
  const reason = params.reason.trim();
  const written = await tx
    .insert(matterScreens)
    .values({ ...params, reason })
    .onConflictDoUpdate({
      target: [matterScreens.matterId, matterScreens.userId],
      set: { reason },
      setWhere: sql`${matterScreens.reason} is distinct from ${reason}`,
    })
    .returning({ userId: matterScreens.userId });
  return { ok: true, changed: written.length > 0 };
}

/** Lifts a member's screen; refused when they are not screened. */
export async function removeScreen(
  tx: Tx,
  params: { organizationId: string; matterId: string; userId: string },
): Promise<MembershipChange> {
  const removed = await tx
    .delete(matterScreens)
    .where(
      and(eq(matterScreens.matterId, params.matterId), eq(matterScreens.userId, params.userId)),
    )
    .returning({ userId: matterScreens.userId });
  return removed.length > 0 ? { ok: true, changed: true } : { ok: false, problem: "not_screened" };
}

/**
 * Puts a matter under legal hold (SPEC §5a: its memories do not expire, get purged or erased
 * while it lasts). A matter already held keeps its first `since`; only the reason may change.
 */
export async function holdMatter(
  tx: Tx,
  params: { matterId: string; reason: string; heldBy?: string },
): Promise<{ since: Date }> {
  const [row] = await tx
    .update(matters)
    .set({
      holdReason: params.reason.trim(),
      heldBy: params.heldBy ?? null,
      heldSince: sql`coalesce(${matters.heldSince}, now())`,
    })
    .where(eq(matters.id, params.matterId))
    .returning({ since: matters.heldSince });
  if (!row?.since) throw new Error("the hold was not written");
  return { since: row.since };
}

/** Releases a hold: expiry applies again (what expired meanwhile goes at the next purge). */
export async function releaseMatter(tx: Tx, params: { matterId: string }): Promise<boolean> {
  const released = await tx
    .update(matters)
    .set({ holdReason: null, heldBy: null, heldSince: null })
    .where(and(eq(matters.id, params.matterId), isNotNull(matters.heldSince)))
    .returning({ id: matters.id });
  return released.length > 0;
}

/**
 * The matter named `reference` if the transaction's user may see it (SPEC §5a: not screened,
 * and open or on its team), else undefined — the same whether it does not exist, is restricted
 * or the user is screened. Read as the app role: the may-see rule is PostgreSQL's
 * (`north_visible_matters()`), not this code's.
 */
export async function visibleMatter(
  tx: Tx,
  params: { reference: string },
): Promise<{ id: string; reference: string } | undefined> {
  const [row] = await tx
    .select({ id: matters.id, reference: matters.reference })
    .from(matters)
    .where(
      and(
        sameReference(params.reference),
        sql`${matters.id} = ANY ((SELECT public.north_visible_matters())::uuid[])`,
      ),
    );
  return row;
}

/** The references of these matters (those the transaction's user may see), by id. */
export async function matterReferences(
  tx: Tx,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await tx
    .select({ id: matters.id, reference: matters.reference })
    .from(matters)
    .where(inArray(matters.id, wanted));
  return new Map(rows.map((r) => [r.id, r.reference]));
}

export const WITHHELD_FUNCTION = "memories_withheld";

/**
 * How many of a subject's memories (still holding a body) sit in matters the transaction's user
 * may not see (SPEC §5a, `held`'s `withheld`): a count only, so a subject access request is
 * never silently incomplete and nothing of those memories is read. A definer function because
 * the policies hide exactly those rows from the app role; the organisation and the user are the
 * transaction's, never arguments.
 */
export const withheldDefiner = definerFunction({
  name: WITHHELD_FUNCTION,
  params: "p_subject_fingerprint text, p_subject_type text",
  returns: "integer",
  volatility: "STABLE",
  body: `DECLARE
  v_organization_id uuid := nullif(current_setting('north.organization_id', true), '')::uuid;
  v_count integer;
BEGIN
  IF v_organization_id IS NULL THEN
    RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
  END IF;
  SELECT pg_catalog.count(*)::integer INTO v_count
  FROM public.memories m
  WHERE m.organization_id = v_organization_id
    AND m.subject_fingerprint = p_subject_fingerprint
    AND (p_subject_type IS NULL OR m.subject_type = p_subject_type)
    AND m.forgotten_at IS NULL AND m.purged_at IS NULL
    AND m.matter_id IS NOT NULL
    AND NOT (m.matter_id = ANY (public.north_visible_matters()));
  RETURN v_count;
END`,
});

/** {@link withheldDefiner} for one subject. */
export async function memoriesWithheld(
  tx: Tx,
  params: { subjectFingerprint: string; subjectType?: string },
): Promise<number> {
  const [row] = await tx.execute<{ n: number }>(
    sql`select public.memories_withheld(${params.subjectFingerprint}, ${params.subjectType ?? null}::text) as n`,
  );
  return Number(row?.n ?? 0);
}
