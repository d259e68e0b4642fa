import { createHmac } from "node:crypto";
import { codePointLength } from "@north/agent-runtime";
import { sql } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { definerFunction, MANAGER_GUARD } from "./definer.ts";
import { callManagerOnly } from "./manager-only.ts";
import { asDrizzleSql, type RawStatement } from "./pipelined-transaction.ts";
import {
  type AuditOutcome,
  CURRENT_ORGANIZATION_ID_SQL,
  CURRENT_USER_ID_SQL,
} from "./schema/index.ts";

declare const fingerprinted: unique symbol;

/**
 * An id or subject as the ledger may hold it: a keyed HMAC-SHA256 and the length in code points.
 * Only {@link createFingerprinter} makes one, so no caller can hand the ledger raw text.
 */
export interface TargetFingerprint {
  readonly fingerprint: string;
  readonly length: number;
  readonly [fingerprinted]: true;
}

/**
 * Returns a function that fingerprints ids with the server's audit key (`NORTH_AUDIT_KEY`), so
 * equal ids can be correlated across events without the ledger ever storing them.
 */
export function createFingerprinter(
  key: string | Uint8Array,
): (value: string) => TargetFingerprint {
  if (key.length < 16) throw new TypeError("the audit key must be at least 16 bytes");
  return (value) =>
    ({
      fingerprint: createHmac("sha256", key).update(value, "utf8").digest("hex"),
      length: codePointLength(value),
    }) as TargetFingerprint;
}

export interface AuditEvent {
  /** The tool (or operation) name: a short identifier, checked by the table. */
  tool: string;
  outcome: AuditOutcome;
  tokenId?: string | null;
  requestId?: string | null;
  target?: TargetFingerprint;
  /** Rows affected, for calls where that is the point (forget, purge). */
  affected?: number;
  /** Why, for a refusal or revocation: a short code, never free text. */
  reason?: string;
}

/**
 * Appends one event for the tenant of `tx`. Organization and actor come from the transaction's
 * tenant settings, never from a parameter, and there is no field that could carry a body.
 */
/**
 * The audit insert, as one statement with its parameters: run in a transaction by
 * `recordAudit`, or sent with a tool call's COMMIT (`withTenant`'s tail, decision 035). The
 * organisation and actor are the transaction's tenant, never the caller's word.
 */
export function auditStatement(event: AuditEvent): RawStatement {
  return {
    text: AUDIT_INSERT,
    params: [
      event.tokenId ?? null,
      event.requestId ?? null,
      event.tool,
      event.outcome,
      event.target?.fingerprint ?? null,
      event.target?.length ?? null,
      event.affected ?? null,
      event.reason ?? null,
    ],
  };
}

const AUDIT_INSERT = `insert into public.audit_events (organization_id, actor_id, token_id, request_id, tool, outcome, target_fingerprint, target_length, affected, reason) values (${CURRENT_ORGANIZATION_ID_SQL}, ${CURRENT_USER_ID_SQL}, $1, $2, $3, $4, $5, $6, $7, $8)`;

export async function recordAudit(tx: Tx, event: AuditEvent): Promise<void> {
  await tx.execute(asDrizzleSql(auditStatement(event)));
}

export interface AdminAuditEvent {
  id: string;
  occurredAt: Date;
  actorId: string | null;
  actorEmail: string | null;
  tokenId: string | null;
  tool: string;
  outcome: string;
  reason: string | null;
  targetFingerprint: string | null;
  targetLength: number | null;
  affected: number | null;
  /** This row as a keyset cursor: the exact (microsecond) time and the id. */
  cursor: AuditCursor;
}

/** A position in the ledger, `(occurred_at, id)`: the time as PostgreSQL's exact UTC text. */
export interface AuditCursor {
  time: string;
  id: string;
}

/** Which events to show; every field optional (absent: any). `to` is exclusive. */
export interface AuditFilters {
  actorId?: string;
  tool?: string;
  outcome?: string;
  from?: Date;
  to?: Date;
}

export interface AuditQuery extends AuditFilters {
  organizationId: string;
  requesterId: string;
  /** The page older than this row… */
  before?: AuditCursor;
  /** …or the page just newer than it (never both). */
  after?: AuditCursor;
  limit?: number;
}

/**
 * Ledger entries for a manager, newest first, through `audit_events_for_admin`; `{ ok: false }`
 * for anyone else. Without filters or cursor, the most recent `limit` events.
 */
export async function readAuditForAdmin(
  tx: Tx,
  params: AuditQuery,
): Promise<{ ok: true; events: AdminAuditEvent[] } | { ok: false }> {
  const ts = (d: Date | undefined) => d?.toISOString() ?? null;
  const rows = await callManagerOnly(
    tx,
    sql`select f.*, to_char(f.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_time
        from public.audit_events_for_admin(
          ${params.organizationId}::uuid, ${params.requesterId}::uuid,
          ${params.actorId ?? null}::uuid, ${params.tool ?? null}::text, ${params.outcome ?? null}::text,
          ${ts(params.from)}::timestamptz, ${ts(params.to)}::timestamptz,
          ${params.before?.time ?? null}::timestamptz, ${params.before?.id ?? null}::uuid,
          ${params.after?.time ?? null}::timestamptz, ${params.after?.id ?? null}::uuid,
          ${params.limit ?? 100}::integer) f`,
  );
  if (!rows) return { ok: false };
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const int = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ok: true,
    events: rows.map((r) => ({
      id: String(r.id),
      occurredAt: new Date(String(r.cursor_time)),
      actorId: text(r.actor_id),
      actorEmail: text(r.actor_email),
      tokenId: text(r.token_id),
      tool: String(r.tool),
      outcome: String(r.outcome),
      reason: text(r.reason),
      targetFingerprint: text(r.target_fingerprint),
      targetLength: int(r.target_length),
      affected: int(r.affected),
      cursor: { time: String(r.cursor_time), id: String(r.id) },
    })),
  };
}

export interface AuditPage {
  events: AdminAuditEvent[];
  /** The cursor for the next (older) page, or null on the last. */
  older: AuditCursor | null;
  /** The cursor for the newer page, or null on the first. */
  newer: AuditCursor | null;
}

/**
 * One page of `size` events for a manager (SPEC §8 Audit): the newest matching `filters`, or
 * those just older than `before` / just newer than `after`, with the cursors to walk on. Reads
 * one row more than it shows, to know whether another page follows.
 */
export async function readAuditPageForAdmin(
  tx: Tx,
  params: AuditQuery & { size: number },
): Promise<({ ok: true } & AuditPage) | { ok: false }> {
  const { size, ...query } = params;
  const result = await readAuditForAdmin(tx, { ...query, limit: size + 1 });
  if (!result.ok) return result;
  const newerFirst = params.after !== undefined;
  const more = result.events.length > size;
  // Going newer, the extra row is the newest one; going older, the oldest one.
  const events = more
    ? newerFirst
      ? result.events.slice(1)
      : result.events.slice(0, size)
    : result.events;
  const first = events[0];
  const last = events.at(-1);
  const hasNewer = newerFirst ? more : params.before !== undefined;
  const hasOlder = newerFirst ? true : more;
  return {
    ok: true,
    events,
    newer: hasNewer && first ? first.cursor : null,
    older: hasOlder && last ? last.cursor : null,
  };
}

export const AUDIT_ADMIN_FUNCTION = "audit_events_for_admin";

/** What both directions of {@link adminAudit} select, filter and join. */
const AUDIT_PAGE_SELECT = `
      SELECT e.id, e.occurred_at, e.actor_id, m.email, e.token_id, e.tool, e.outcome, e.reason,
             e.target_fingerprint, e.target_length, e.affected
      FROM public.audit_events e
      LEFT JOIN public.members m ON m.organization_id = e.organization_id AND m.user_id = e.actor_id
      WHERE e.organization_id = p_organization_id
        AND (p_actor_id IS NULL OR e.actor_id = p_actor_id)
        AND (p_tool IS NULL OR e.tool = p_tool)
        AND (p_outcome IS NULL OR e.outcome = p_outcome)
        AND (p_from IS NULL OR e.occurred_at >= p_from)
        AND (p_to IS NULL OR e.occurred_at < p_to)`;

/**
 * One page of an organization's audit events, newest first, for a manager of it (the app role
 * may only INSERT into the ledger). Same checks as the profile function: the requester must be
 * the transaction's tenant and a manager. Every filter is optional (null: any): actor, tool,
 * outcome, and `[p_from, p_to)`. Keyset paging on `(occurred_at, id)`: `p_before_*` gives the
 * page older than that row, `p_after_*` the page just newer than it (still returned newest
 * first); at most one cursor, at most 500 rows a call. The ledger holds no body.
 */
export const adminAuditDefiner = definerFunction({
  name: AUDIT_ADMIN_FUNCTION,
  params: `p_organization_id uuid, p_requester_id uuid, p_actor_id uuid, p_tool text,
    p_outcome text, p_from timestamptz, p_to timestamptz, p_before_time timestamptz,
    p_before_id uuid, p_after_time timestamptz, p_after_id uuid, p_limit integer`,
  returns: `TABLE (
  id uuid,
  occurred_at timestamptz,
  actor_id uuid,
  actor_email text,
  token_id uuid,
  tool text,
  outcome text,
  reason text,
  target_fingerprint text,
  target_length integer,
  affected integer
)`,
  volatility: "STABLE",
  body: `DECLARE
  v_limit integer := least(greatest(coalesce(p_limit, 100), 1), 500);
BEGIN
${MANAGER_GUARD}
  IF (p_before_time IS NULL) <> (p_before_id IS NULL)
     OR (p_after_time IS NULL) <> (p_after_id IS NULL)
     OR (p_before_time IS NOT NULL AND p_after_time IS NOT NULL) THEN
    RAISE EXCEPTION 'a cursor is a time and an id, and only one of before and after'
      USING ERRCODE = '22023';
  END IF;
  IF p_after_time IS NULL THEN
    RETURN QUERY${AUDIT_PAGE_SELECT}
        AND (p_before_time IS NULL OR (e.occurred_at, e.id) < (p_before_time, p_before_id))
      ORDER BY e.occurred_at DESC, e.id DESC
      LIMIT v_limit;
  ELSE
    RETURN QUERY
      SELECT newer.* FROM (${AUDIT_PAGE_SELECT}
          AND (e.occurred_at, e.id) > (p_after_time, p_after_id)
        ORDER BY e.occurred_at ASC, e.id ASC
        LIMIT v_limit
      ) newer
      ORDER BY newer.occurred_at DESC, newer.id DESC;
  END IF;
END`,
});
