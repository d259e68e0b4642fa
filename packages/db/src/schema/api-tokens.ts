import { sql } from "drizzle-orm";
import { check, foreignKey, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { members } from "./members.ts";
import { organizations } from "./organizations.ts";

/**
 * API tokens, stored only as SHA-256 hashes. RLS is enabled with no policy and the app role has
 * no privilege on the table: the app reaches it only through `resolve_api_token` (SECURITY
 * DEFINER, see definer-functions.ts), which returns a principal for a valid hash and nothing else.
 * Tokens are minted, listed and revoked by the operator CLI on the owner connection.
 */
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    scopes: text("scopes").array().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [
    index("api_tokens_organization").on(t.organizationId),
    foreignKey({
      name: "api_tokens_member_fk",
      columns: [t.organizationId, t.userId],
      foreignColumns: [members.organizationId, members.userId],
    }),
    check("api_tokens_hash_shape", sql`${t.tokenHash} ~ '^[0-9a-f]{64}$'`),
    check(
      "api_tokens_scopes_valid",
      sql`${t.scopes} <@ array['profile:write', 'memory:read', 'memory:write', 'admin']::text[]`,
    ),
  ],
).enableRLS();
