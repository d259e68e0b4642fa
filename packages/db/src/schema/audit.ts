import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  pgPolicy,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { appRole } from "./roles.ts";
import { currentOrganizationId, currentUserId } from "./tenant-settings.ts";

export const AUDIT_OUTCOMES = [
  "created",
  "updated",
  "noop",
  "conflict",
  "rejected",
  "rate_limited",
  "read",
  "error",
  "forgotten",
  "purged",
  // Sign-in (SPEC §3a): a consent granted or denied, a sign-in refused, a grant revoked.
  "granted",
  "denied",
  "refused",
  "revoked",
] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/**
 * The ledger. Its columns are shaped so that no body can land in them: the tool is a short
 * identifier, ids are uuids, and a target is only a 64-hex HMAC plus a length. The app role may
 * INSERT and nothing else; managers read it through a SECURITY DEFINER function.
 */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    occurredAt: timestamp("occurred_at", { withTimezone: true }).notNull().defaultNow(),
    organizationId: uuid("organization_id").notNull(),
    actorId: uuid("actor_id"),
    tokenId: uuid("token_id"),
    requestId: uuid("request_id"),
    tool: text("tool").notNull(),
    outcome: text("outcome", { enum: AUDIT_OUTCOMES }).notNull(),
    targetFingerprint: text("target_fingerprint"),
    targetLength: integer("target_length"),
    /** Rows a call affected, where that is the point (forget, purge). Added in 0004. */
    affected: integer("affected"),
    /** Why, for a refusal or revocation: a short code (`not_member`, `email_unverified`…). */
    reason: text("reason"),
  },
  (t) => [
    index("audit_events_organization_time").on(t.organizationId, t.occurredAt),
    // The console's filters (SPEC §8): by member and by tool, newest first. Added in 0009.
    index("audit_events_organization_actor_time").on(t.organizationId, t.actorId, t.occurredAt),
    index("audit_events_organization_tool_time").on(t.organizationId, t.tool, t.occurredAt),
    check("audit_events_tool_shape", sql`${t.tool} ~ '^[a-z][a-z0-9_]{0,63}$'`),
    check(
      "audit_events_outcome_valid",
      sql.raw(`outcome in (${AUDIT_OUTCOMES.map((o) => `'${o}'`).join(", ")})`),
    ),
    check(
      "audit_events_fingerprint_shape",
      sql`${t.targetFingerprint} is null or ${t.targetFingerprint} ~ '^[0-9a-f]{64}$'`,
    ),
    check(
      "audit_events_target_pair",
      sql`(${t.targetFingerprint} is null) = (${t.targetLength} is null) and (${t.targetLength} is null or ${t.targetLength} >= 0)`,
    ),
    check(
      "audit_events_reason_shape",
      sql`${t.reason} is null or ${t.reason} ~ '^[a-z][a-z_]{0,39}$'`,
    ),
    pgPolicy("audit_events_tenant_insert", {
      for: "insert",
      to: appRole,
      withCheck: sql`organization_id = ${currentOrganizationId} and actor_id is not distinct from ${currentUserId}`,
    }),
  ],
);
