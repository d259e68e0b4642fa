import { createHmac } from "node:crypto";
import { codePointLength } from "@north/agent-runtime";
import { sql } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { callManagerOnly } from "./manager-only.ts";
import {
  type AuditOutcome,
  auditEvents,
  currentOrganizationId,
  currentUserId,
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
export async function recordAudit(tx: Tx, event: AuditEvent): Promise<void> {
  await tx.insert(auditEvents).values({
    organizationId: sql`${currentOrganizationId}`,
    actorId: sql`${currentUserId}`,
    tokenId: event.tokenId ?? null,
    requestId: event.requestId ?? null,
    tool: event.tool,
    outcome: event.outcome,
    targetFingerprint: event.target?.fingerprint ?? null,
    targetLength: event.target?.length ?? null,
    affected: event.affected ?? null,
    reason: event.reason ?? null,
  });
}

export interface AdminAuditEvent {
  occurredAt: Date;
  actorId: string | null;
  actorEmail: string | null;
  tool: string;
  outcome: string;
  targetFingerprint: string | null;
  targetLength: number | null;
  affected: number | null;
}

/**
 * Recent ledger entries for a manager, through `audit_events_for_admin`; `{ ok: false }` for
 * anyone else.
 */
export async function readAuditForAdmin(
  tx: Tx,
  params: { organizationId: string; requesterId: string; limit?: number },
): Promise<{ ok: true; events: AdminAuditEvent[] } | { ok: false }> {
  const rows = await callManagerOnly(
    tx,
    sql`select * from public.audit_events_for_admin(${params.organizationId}::uuid, ${params.requesterId}::uuid, ${params.limit ?? 100}::integer)`,
  );
  if (!rows) return { ok: false };
  return {
    ok: true,
    events: rows.map((r) => ({
      occurredAt: new Date(String(r.occurred_at)),
      actorId: (r.actor_id as string | null) ?? null,
      actorEmail: (r.actor_email as string | null) ?? null,
      tool: String(r.tool),
      outcome: String(r.outcome),
      targetFingerprint: (r.target_fingerprint as string | null) ?? null,
      targetLength: r.target_length === null ? null : Number(r.target_length),
      affected: r.affected === null ? null : Number(r.affected),
    })),
  };
}
