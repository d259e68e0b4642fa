import { sql } from "drizzle-orm";
import {
  check,
  customType,
  foreignKey,
  index,
  pgPolicy,
  pgTable,
  real,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { matters } from "./matters.ts";
import { members } from "./members.ts";
import { ORGANIZATION_LANGUAGES, organizations } from "./organizations.ts";
import { appRole } from "./roles.ts";
import { currentOrganizationId, currentUserId } from "./tenant-settings.ts";

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

const sameOrganization = sql`organization_id = ${currentOrganizationId}`;

/**
 * SPEC §5a's may-see rule for the transaction's user: a firm-wide memory, or one of a matter
 * they are not screened from and that is open or has them on its team
 * (`north_visible_matters()`, drizzle/0021; evaluated once per statement as an InitPlan). Every
 * policy of `memories` applies it, so a query that forgets the filter still reads nothing of a
 * screened or restricted matter.
 */
export const MAY_SEE_MATTER_SQL =
  "(matter_id IS NULL OR matter_id = ANY ((SELECT public.north_visible_matters())::uuid[]))";
const maySee = sql.raw(MAY_SEE_MATTER_SQL);
const visibleInOrganization = sql`${sameOrganization} and ${maySee}`;
const notErasedUnderHold = sql.raw(
  "(forgotten_at IS NULL OR NOT coalesce(matter_id = ANY ((SELECT public.north_held_matters())::uuid[]), false))",
);

/**
 * Organisation-scoped memories (SPEC §5). Provenance is in the row: author, run, origin, dates.
 * `subject_fingerprint` (a keyed HMAC of type + id, computed by the server) stays when a memory
 * is forgotten or purged; `body` and `subject_id` do not, so a tombstone is findable by someone
 * who knows the subject and readable by nobody. `language` is the organisation's, copied at write
 * time (and re-set by `north org set --language`) so that `search`, generated from the body, can
 * stem it in that language with accents folded (decision 018); `search` empties itself when the
 * body goes.
 */
export const memories = pgTable(
  "memories",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    kind: text("kind", { enum: ["fact", "observation"] }).notNull(),
    subjectType: text("subject_type"),
    subjectId: text("subject_id"),
    subjectFingerprint: text("subject_fingerprint"),
    body: text("body"),
    origin: text("origin", { enum: ["stated", "inferred"] }).notNull(),
    authorId: uuid("author_id").notNull(),
    runId: text("run_id").notNull(),
    embedding: real("embedding").array(),
    /**
     * Which model made `embedding`, as `model@dimensions`: semantic recall compares only vectors
     * of the current model, and the backfill re-embeds the others (decision 020).
     */
    embeddingModel: text("embedding_model"),
    language: text("language", { enum: ORGANIZATION_LANGUAGES }).notNull().default("en"),
    // Two analyses of the body, so a query matches with or without its accents (decision 018):
    // stemmed then folded (the French stemmer reads accents), and folded then stemmed. Each
    // lexeme carries its scope's tag — the matter's for a matter's memory, else the
    // organisation's (decisions 027 and 039) — so the GIN index's entries, and the planner's
    // statistics, are per scope and word; queries come tagged from north_search_query(…, prefix).
    search: tsvector("search").generatedAlwaysAs(
      sql`public.north_tenant_lexemes(coalesce(matter_id, organization_id), public.north_unaccent_lexemes(to_tsvector(public.north_search_config(language), coalesce(body, ''))) || to_tsvector(public.north_search_config(language), public.north_unaccent(coalesce(body, ''))))`,
    ),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    forgottenAt: timestamp("forgotten_at", { withTimezone: true }),
    forgottenBy: uuid("forgotten_by"),
    purgedAt: timestamp("purged_at", { withTimezone: true }),
    /**
     * The newer memory that replaced this one (SPEC §5, `supersedes`): no longer recalled,
     * still listed by `held` with what superseded it, expiring as before.
     */
    supersededBy: uuid("superseded_by"),
    supersededAt: timestamp("superseded_at", { withTimezone: true }),
    /** The matter it was written in (SPEC §5a); null for a firm-wide memory. */
    matterId: uuid("matter_id"),
  },
  (t) => [
    foreignKey({
      name: "memories_author_fk",
      columns: [t.organizationId, t.authorId],
      foreignColumns: [members.organizationId, members.userId],
    }),
    // Newest first as `ORDER BY created_at DESC` asks (nulls first, PostgreSQL's default for
    // DESC): an index sorted DESC NULLS LAST cannot serve that order, and recall then sorted
    // every live memory of the organisation (decision 021).
    index("memories_newest").on(t.organizationId, t.createdAt.desc().nullsFirst()),
    index("memories_subject").on(t.organizationId, t.subjectFingerprint),
    // A remember's idempotence look-up (memories/remember.ts): an identical memory of the last
    // day, found by its identity instead of by reading the author's day (the body hashed: a
    // body of 2,000 characters can outgrow a btree entry).
    index("memories_identity").on(t.organizationId, t.authorId, sql`md5(${t.body})`),
    // A matter's memories (its console page, the hold, the foreign key's checks); firm-wide
    // memories, most of them, are left out, so a firm-wide remember does not write it.
    index("memories_matter").on(t.organizationId, t.matterId).where(sql`${t.matterId} is not null`),
    foreignKey({
      name: "memories_matter_fk",
      columns: [t.organizationId, t.matterId],
      foreignColumns: [matters.organizationId, matters.id],
    }),
    index("memories_expiry").on(t.expiresAt),
    // Tagged lexemes (decision 027): a word's posting list is one organisation's matches, so a
    // recall reads neither other organisations' matches nor its own organisation's every row.
    index("memories_tenant_search").using("gin", t.search),
    check("memories_kind_valid", sql`${t.kind} in ('fact', 'observation')`),
    check("memories_origin_valid", sql`${t.origin} in ('stated', 'inferred')`),
    check("memories_language_valid", sql`${t.language} in ('en', 'fr')`),
    check(
      "memories_body_length",
      sql`${t.body} is null or char_length(${t.body}) between 1 and 2000`,
    ),
    check(
      "memories_subject_pair",
      sql`(${t.subjectType} is null) = (${t.subjectFingerprint} is null) and (${t.subjectId} is null or ${t.subjectType} is not null)`,
    ),
    check(
      "memories_observation_subject",
      sql`${t.kind} = 'fact' or ${t.subjectFingerprint} is not null`,
    ),
    check(
      "memories_fingerprint_shape",
      sql`${t.subjectFingerprint} is null or ${t.subjectFingerprint} ~ '^[0-9a-f]{64}$'`,
    ),
    check(
      "memories_superseded_pair",
      sql`(${t.supersededBy} is null) = (${t.supersededAt} is null) and ${t.supersededBy} is distinct from ${t.id}`,
    ),
    foreignKey({
      name: "memories_superseded_by_fk",
      columns: [t.supersededBy],
      foreignColumns: [t.id],
    }),
    check("memories_run_length", sql`char_length(${t.runId}) between 1 and 200`),
    check(
      "memories_erased_have_no_body",
      sql`(${t.forgottenAt} is null and ${t.purgedAt} is null) or (${t.body} is null and ${t.subjectId} is null and ${t.embedding} is null)`,
    ),
    pgPolicy("memories_tenant_select", {
      for: "select",
      to: appRole,
      using: visibleInOrganization,
    }),
    pgPolicy("memories_tenant_insert", {
      for: "insert",
      to: appRole,
      withCheck: sql`organization_id = ${currentOrganizationId} and author_id = ${currentUserId} and ${maySee}`,
    }),
    pgPolicy("memories_tenant_update", {
      for: "update",
      to: appRole,
      using: visibleInOrganization,
      // SPEC §5a: a memory of a matter under legal hold is never erased, whatever statement
      // tries (the stores check too; this holds for the one that forgets to).
      withCheck: sql`${visibleInOrganization} and ${notErasedUnderHold}`,
    }),
  ],
);
