import { sql } from "drizzle-orm";
import {
  check,
  foreignKey,
  pgPolicy,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { members } from "./members.ts";
import { organizations } from "./organizations.ts";
import { appRole } from "./roles.ts";
import { currentOrganizationId } from "./tenant-settings.ts";

export const MATTER_ACCESS = ["open", "restricted"] as const;
export type MatterAccess = (typeof MATTER_ACCESS)[number];

/** The firm's matter numbers: 1–64 characters of `[A-Za-z0-9._/-]` (SPEC §5a). */
export const MATTER_REFERENCE_PATTERN = "^[A-Za-z0-9._/-]{1,64}$";

const sameOrganization = (organizationId: unknown) =>
  sql`${organizationId} = ${currentOrganizationId}`;

/**
 * A client engagement (SPEC §5a), by the firm's matter number, unique per organisation whatever
 * its case. `open`: every member may see it but those screened from it; `restricted`: its team
 * only. A legal hold (`hold_reason`, `held_by`, `held_since`, all set or none) keeps its memories
 * from expiring, being purged or being erased (decision 038). Written by the operator CLI on the
 * owner connection; the app role reads its own organisation's.
 */
export const matters = pgTable(
  "matters",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    reference: text("reference").notNull(),
    name: text("name").notNull(),
    client: text("client"),
    access: text("access", { enum: MATTER_ACCESS }).notNull().default("open"),
    holdReason: text("hold_reason"),
    heldBy: uuid("held_by"),
    heldSince: timestamp("held_since", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique("matters_organization_id_unique").on(t.organizationId, t.id),
    uniqueIndex("matters_organization_reference_unique").on(
      t.organizationId,
      sql`lower(${t.reference})`,
    ),
    check("matters_reference_shape", sql`${t.reference} ~ '${sql.raw(MATTER_REFERENCE_PATTERN)}'`),
    check("matters_name_length", sql`char_length(${t.name}) between 1 and 200`),
    check(
      "matters_client_length",
      sql`${t.client} is null or char_length(${t.client}) between 1 and 200`,
    ),
    check("matters_access_valid", sql`${t.access} in ('open', 'restricted')`),
    check(
      "matters_hold_triple",
      sql`(${t.holdReason} is null) = (${t.heldSince} is null) and (${t.heldBy} is null or ${t.heldSince} is not null)`,
    ),
    check(
      "matters_hold_reason_length",
      sql`${t.holdReason} is null or char_length(${t.holdReason}) between 1 and 500`,
    ),
    pgPolicy("matters_tenant_select", {
      for: "select",
      to: appRole,
      using: sameOrganization(t.organizationId),
    }),
  ],
);

/** The members assigned to a matter: for a restricted one, the only ones who may see it. */
export const matterTeam = pgTable(
  "matter_team",
  {
    organizationId: uuid("organization_id").notNull(),
    matterId: uuid("matter_id").notNull(),
    userId: uuid("user_id").notNull(),
    addedAt: timestamp("added_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.matterId, t.userId] }),
    foreignKey({
      name: "matter_team_matter_fk",
      columns: [t.organizationId, t.matterId],
      foreignColumns: [matters.organizationId, matters.id],
    }).onDelete("cascade"),
    foreignKey({
      name: "matter_team_member_fk",
      columns: [t.organizationId, t.userId],
      foreignColumns: [members.organizationId, members.userId],
    }),
    pgPolicy("matter_team_tenant_select", {
      for: "select",
      to: appRole,
      using: sameOrganization(t.organizationId),
    }),
  ],
);

/**
 * A member screened from a matter (an ethical wall), with the reason: they may not see it, open
 * or not, on its team or not, manager or not (SPEC §5a: a screen wins).
 */
export const matterScreens = pgTable(
  "matter_screens",
  {
    organizationId: uuid("organization_id").notNull(),
    matterId: uuid("matter_id").notNull(),
    userId: uuid("user_id").notNull(),
    reason: text("reason").notNull(),
    screenedAt: timestamp("screened_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.matterId, t.userId] }),
    foreignKey({
      name: "matter_screens_matter_fk",
      columns: [t.organizationId, t.matterId],
      foreignColumns: [matters.organizationId, matters.id],
    }).onDelete("cascade"),
    foreignKey({
      name: "matter_screens_member_fk",
      columns: [t.organizationId, t.userId],
      foreignColumns: [members.organizationId, members.userId],
    }),
    check("matter_screens_reason_length", sql`char_length(${t.reason}) between 1 and 500`),
    pgPolicy("matter_screens_tenant_select", {
      for: "select",
      to: appRole,
      using: sameOrganization(t.organizationId),
    }),
  ],
);
