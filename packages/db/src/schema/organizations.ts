import { sql } from "drizzle-orm";
import { check, pgPolicy, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { appRole } from "./roles.ts";
import { currentOrganizationId } from "./tenant-settings.ts";

export const organizations = pgTable(
  "organizations",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("organizations_name_length", sql`char_length(${t.name}) between 1 and 200`),
    pgPolicy("organizations_tenant_select", {
      for: "select",
      to: appRole,
      using: sql`${t.id} = ${currentOrganizationId}`,
    }),
  ],
);
