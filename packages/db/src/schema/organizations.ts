import { sql } from "drizzle-orm";
import { check, pgPolicy, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { appRole } from "./roles.ts";
import { currentOrganizationId } from "./tenant-settings.ts";

/**
 * The languages full-text recall stems and folds (SPEC §5, decision 018): an organisation has
 * one, `en` unless the operator sets another with `north org set --language`.
 */
export const ORGANIZATION_LANGUAGES = ["en", "fr"] as const;
export type OrganizationLanguage = (typeof ORGANIZATION_LANGUAGES)[number];

export const organizations = pgTable(
  "organizations",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    language: text("language", { enum: ORGANIZATION_LANGUAGES }).notNull().default("en"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("organizations_name_length", sql`char_length(${t.name}) between 1 and 200`),
    check("organizations_language_valid", sql`${t.language} in ('en', 'fr')`),
    pgPolicy("organizations_tenant_select", {
      for: "select",
      to: appRole,
      using: sql`${t.id} = ${currentOrganizationId}`,
    }),
  ],
);
