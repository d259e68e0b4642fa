import { gt, isNull, or, type SQL, sql } from "drizzle-orm";
import { memories } from "../schema/index.ts";

/**
 * Whether a memory's matter is under legal hold (SPEC §5a), in the transaction's organisation:
 * such a memory does not expire while the hold lasts.
 */
export const IN_HELD_MATTER_SQL = (alias: string): string =>
  `${alias}.matter_id = ANY ((SELECT public.north_held_matters())::uuid[])`;

/**
 * {@link IN_HELD_MATTER_SQL} for Drizzle, never null: whether a memory's matter is under legal
 * hold in the transaction's organisation (a firm-wide memory is not).
 */
export const IN_HELD_MATTER: SQL<boolean> = sql<boolean>`coalesce(${memories.matterId} = ANY ((SELECT public.north_held_matters())::uuid[]), false)`;

/**
 * A live memory (SPEC §5): neither erased (forgotten), purged, superseded nor expired — a memory
 * of a matter under legal hold does not expire while it is held (SPEC §5a). It is what
 * recall and the briefing return, what remember's idempotence compares with, and what the
 * embeddings backfill embeds. Defined once for Drizzle and once for PL/pgSQL (the candidate and
 * backfill functions); `live.integration.test.ts` holds the two equal, row by row.
 */
export const LIVE_MEMORY: readonly SQL[] = [
  isNull(memories.forgottenAt),
  isNull(memories.purgedAt),
  isNull(memories.supersededBy),
  or(gt(memories.expiresAt, sql`now()`), IN_HELD_MATTER) as SQL,
];

/** Where a memory stands, as `held` and the console's review show it. */
export type MemoryState = "live" | "superseded" | "expired" | "forgotten" | "purged";

/**
 * A memory's {@link MemoryState} by the database's clock, the first that applies: erased, purged,
 * expired (unless its matter is under legal hold, SPEC §5a), superseded, else live. The one
 * definition `held` and the console's review both select.
 */
export const MEMORY_STATE: SQL<MemoryState> = sql<MemoryState>`case
  when ${memories.forgottenAt} is not null then 'forgotten'
  when ${memories.purgedAt} is not null then 'purged'
  when ${memories.expiresAt} <= now() and not ${IN_HELD_MATTER} then 'expired'
  when ${memories.supersededBy} is not null then 'superseded'
  else 'live' end`;

/** {@link LIVE_MEMORY} in PL/pgSQL, for the `memories` row named `alias`. */
export const liveMemorySql = (alias: string): string =>
  `${alias}.forgotten_at IS NULL AND ${alias}.purged_at IS NULL AND ${alias}.superseded_by IS NULL AND (${alias}.expires_at > pg_catalog.now() OR ${IN_HELD_MATTER_SQL(alias)})`;

/**
 * A memory that still holds its body: neither erased nor purged (superseded and expired ones
 * do, until the purge). What erasure may still erase and the console may still show.
 */
export const HOLDS_BODY: readonly SQL[] = [isNull(memories.forgottenAt), isNull(memories.purgedAt)];

/** {@link HOLDS_BODY} in PL/pgSQL, for the `memories` row named `alias`. */
export const holdsBodySql = (alias: string): string =>
  `${alias}.forgotten_at IS NULL AND ${alias}.purged_at IS NULL`;
