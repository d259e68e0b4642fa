import { sql } from "drizzle-orm";
import {
  check,
  pgPolicy,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { organizations } from "./organizations.ts";
import { appRole } from "./roles.ts";
import { currentOrganizationId } from "./tenant-settings.ts";

export const MEMBER_ROLES = ["member", "manager"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/**
 * A user belongs to exactly one organization; a person in two workspaces has two user ids.
 * The app role may only read its own organization's members: membership is written by the
 * operator CLI on the owner connection.
 */
export const members = pgTable(
  "members",
  {
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id").notNull().unique().defaultRandom(),
    email: text("email").notNull(),
    role: text("role", { enum: MEMBER_ROLES }).notNull().default("member"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * Set by `north member remove`: the member's tokens stop resolving and the manager checks
     * refuse them, while their rows (profile, authored memories) stay for the organisation's
     * records and for `north export`. `member add` with the same email reinstates them.
     */
    removedAt: timestamp("removed_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId] }),
    uniqueIndex("members_organization_email_unique").on(t.organizationId, sql`lower(${t.email})`),
    check("members_role_valid", sql`${t.role} in ('member', 'manager')`),
    check("members_email_length", sql`char_length(${t.email}) between 3 and 320`),
    pgPolicy("members_tenant_select", {
      for: "select",
      to: appRole,
      using: sql`${t.organizationId} = ${currentOrganizationId}`,
    }),
  ],
);
