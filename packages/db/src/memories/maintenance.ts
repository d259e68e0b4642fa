import { subjectKey } from "@north/agent-runtime";
import { and, isNotNull, isNull, sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Database } from "../client.ts";
import { memories } from "../schema/index.ts";
import type { SubjectFingerprinter } from "./remember.ts";

/** Removes the bodies of every expired memory (all organizations) and audits each purge. */
export async function purgeExpiredMemories(
  db: Database,
): Promise<{ organizations: number; purged: number }> {
  const rows = await db.execute<{ organization_id: string; purged: number }>(
    sql`select * from public.purge_expired_memories()`,
  );
  return {
    organizations: rows.length,
    purged: [...rows].reduce((sum, r) => sum + Number(r.purged), 0),
  };
}

/**
 * Recomputes every subject fingerprint from the subject id still stored beside it, with the
 * current canonical form and key: the operator step after canonical matching changed (or after
 * `NORTH_AUDIT_KEY` was rotated). Owner connection, every organisation, one transaction.
 * Tombstones keep their old fingerprint: their subject id was erased, so nothing can recompute
 * it — they stay listed by id in the audit trail but no longer match a subject lookup.
 */
export async function rekeySubjectFingerprints(
  db: Database,
  fingerprint: SubjectFingerprinter,
): Promise<{ checked: number; rekeyed: number; tombstonesKept: number }> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .select({
        id: memories.id,
        subjectId: memories.subjectId,
        subjectFingerprint: memories.subjectFingerprint,
      })
      .from(memories)
      .where(isNotNull(memories.subjectId));
    const changed = rows.flatMap((row) => {
      const next = fingerprint(subjectKey({ id: row.subjectId ?? "" }));
      return next === row.subjectFingerprint ? [] : [{ id: row.id, next }];
    });
    if (changed.length > 0) {
      await tx.execute(sql`
        update ${memories} m set subject_fingerprint = v.fp
        from unnest(${`{${changed.map((c) => c.id).join(",")}}`}::uuid[],
                    ${`{${changed.map((c) => c.next).join(",")}}`}::text[]) as v(id, fp)
        where m.id = v.id`);
    }
    const [kept] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(memories)
      .where(and(isNull(memories.subjectId), isNotNull(memories.subjectFingerprint)));
    return { checked: rows.length, rekeyed: changed.length, tombstonesKept: kept?.n ?? 0 };
  });
}

export interface ReclaimResult {
  /** The steps that ran, in order. */
  ran: string[];
  /** Steps this connection may not run (e.g. CHECKPOINT without superuser or pg_checkpoint). */
  skipped: string[];
}

/**
 * After erasure and purge the bodies are gone from every row, but their bytes stay on disk in
 * dead tuples, index pages and WAL until PostgreSQL reuses the space (docs/security.md, "Erasure
 * and disk"). This runs what an operator connection can: `VACUUM` of the memories table (or
 * `VACUUM FULL`, which rewrites the table and its indexes into new files and takes an ACCESS
 * EXCLUSIVE lock while it runs), then `CHECKPOINT` and a WAL switch so old segments can be
 * recycled. Each step runs outside a transaction, as VACUUM requires.
 */
export async function reclaimErasedSpace(
  client: Sql,
  options: { full: boolean },
): Promise<ReclaimResult> {
  const ran: string[] = [];
  const skipped: string[] = [];
  // VACUUM by a role that does not own the table only warns and does nothing: check first.
  const [owner] = await client<{ may: boolean }[]>`
    select pg_has_role(current_user, c.relowner, 'USAGE')
           or (select rolsuper from pg_roles where rolname = current_user) as may
    from pg_class c where c.oid = 'public.memories'::regclass`;
  if (!owner?.may) skipped.push(options.full ? "vacuum full" : "vacuum");
  const vacuum = options.full
    ? "VACUUM (FULL, ANALYZE) public.memories"
    : "VACUUM (ANALYZE) public.memories";
  if (owner?.may) {
    await client.unsafe(vacuum);
    ran.push(options.full ? "vacuum full" : "vacuum");
  }
  for (const [name, statement] of [
    ["checkpoint", "CHECKPOINT"],
    ["wal switch", "SELECT pg_switch_wal()"],
  ] as const) {
    try {
      await client.unsafe(statement);
      ran.push(name);
    } catch (error) {
      if ((error as { code?: string }).code !== "42501") throw error;
      skipped.push(name);
    }
  }
  return { ran, skipped };
}
