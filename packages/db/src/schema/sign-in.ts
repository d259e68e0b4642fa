import { sql } from "drizzle-orm";
import {
  check,
  foreignKey,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { members } from "./members.ts";
import { organizations } from "./organizations.ts";

/**
 * An organisation's OpenID Connect identity provider (SPEC §3a), set by `north org sso set`.
 * The client secret is stored only encrypted with NORTH_SECRET_KEY. The app role has no grant:
 * sign-in reads a connection through `sso_connection_for_domain` / `_for_organization`.
 */
export const ssoConnections = pgTable(
  "sso_connections",
  {
    organizationId: uuid("organization_id")
      .primaryKey()
      .references(() => organizations.id),
    issuer: text("issuer").notNull(),
    clientId: text("client_id").notNull(),
    clientSecretEncrypted: text("client_secret_encrypted").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("sso_connections_issuer_url", sql`${t.issuer} ~ '^https?://[^\\s]+$'`),
    check("sso_connections_client_id_length", sql`char_length(${t.clientId}) between 1 and 500`),
  ],
);

/**
 * The email domains that send a person to an organisation's IdP (home-realm discovery). A
 * domain belongs to one organisation at most, so an email never has two possible IdPs.
 */
export const ssoDomains = pgTable(
  "sso_domains",
  {
    domain: text("domain").primaryKey(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => ssoConnections.organizationId, { onDelete: "cascade" }),
  },
  (t) => [
    check(
      "sso_domains_shape",
      sql`${t.domain} = lower(${t.domain}) and ${t.domain} ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$'`,
    ),
  ],
);

/**
 * The (issuer, subject) pair an IdP sign-in bound to a member: after the first sign-in, the
 * pair — not the email, which an IdP may reassign — is what identifies the person.
 */
export const memberIdentities = pgTable(
  "member_identities",
  {
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    organizationId: uuid("organization_id").notNull(),
    userId: uuid("user_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.issuer, t.subject] }),
    uniqueIndex("member_identities_one_per_issuer").on(t.userId, t.issuer),
    foreignKey({
      name: "member_identities_member_fk",
      columns: [t.organizationId, t.userId],
      foreignColumns: [members.organizationId, members.userId],
    }),
  ],
);
