import { sql } from "drizzle-orm";
import {
  check,
  foreignKey,
  index,
  integer,
  pgPolicy,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { apiTokens } from "./api-tokens.ts";
import { members } from "./members.ts";
import { organizations } from "./organizations.ts";
import { appRole } from "./roles.ts";
import { currentOrganizationId, currentUserId } from "./tenant-settings.ts";

const ownRow = sql`organization_id = ${currentOrganizationId} and user_id = ${currentUserId}`;

/**
 * Admin console sessions (SPEC §8). The browser holds only an opaque random id; the row keeps
 * its SHA-256 hash, the member and the API token it was opened with, an idle window and an
 * absolute expiry, and the session's CSRF token. Looking a session up by its hash happens
 * before the tenant is known, so it goes through `resolve_admin_session` (SECURITY DEFINER);
 * opening and ending one run in the member's own tenant transaction, and these policies keep
 * the app role to its own member's rows.
 */
export const adminSessions = pgTable(
  "admin_sessions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    sessionHash: text("session_hash").notNull().unique(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id").notNull(),
    /** The API token the session was opened with; null when it was opened through the IdP. */
    tokenId: uuid("token_id").references(() => apiTokens.id),
    csrfToken: text("csrf_token").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull().defaultNow(),
    idleTimeoutS: integer("idle_timeout_s").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [
    index("admin_sessions_member").on(t.organizationId, t.userId),
    foreignKey({
      name: "admin_sessions_member_fk",
      columns: [t.organizationId, t.userId],
      foreignColumns: [members.organizationId, members.userId],
    }),
    check("admin_sessions_hash_shape", sql`${t.sessionHash} ~ '^[0-9a-f]{64}$'`),
    check("admin_sessions_csrf_shape", sql`${t.csrfToken} ~ '^[A-Za-z0-9_-]{43}$'`),
    check("admin_sessions_idle_positive", sql`${t.idleTimeoutS} > 0`),
    check("admin_sessions_expiry_after_start", sql`${t.expiresAt} > ${t.createdAt}`),
    pgPolicy("admin_sessions_own_select", {
      for: "select",
      to: appRole,
      using: ownRow,
    }),
    pgPolicy("admin_sessions_own_insert", {
      for: "insert",
      to: appRole,
      withCheck: ownRow,
    }),
    pgPolicy("admin_sessions_own_update", {
      for: "update",
      to: appRole,
      using: ownRow,
      withCheck: ownRow,
    }),
  ],
);
