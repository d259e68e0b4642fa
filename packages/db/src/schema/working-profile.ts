import { sql } from "drizzle-orm";
import {
  check,
  foreignKey,
  integer,
  pgPolicy,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { members } from "./members.ts";
import { appRole } from "./roles.ts";
import { currentOrganizationId, currentUserId } from "./tenant-settings.ts";

const ownRow = sql`organization_id = ${currentOrganizationId} and owner_user_id = ${currentUserId}`;

/**
 * One row per (organization, owner, question_id). RLS is enabled but not forced: the table's
 * owner (`forma`) bypasses it, and `working_profile_answers_for_admin` depends on exactly that
 * to read every member's rows for a manager (see packages/db/src/definer-functions.ts).
 */
export const workingProfileAnswers = pgTable(
  "working_profile_answers",
  {
    organizationId: uuid("organization_id").notNull(),
    ownerUserId: uuid("owner_user_id").notNull(),
    questionId: text("question_id").notNull(),
    /**
     * The question as the lawyer was asked it. The one additive nullable column of the source
     * system (SPEC §6): rows written before it, or by a writer that predates it, hold null and
     * read with the bank's wording or the legacy label.
     */
    questionText: text("question_text"),
    answer: text("answer").notNull(),
    version: integer("version").notNull().default(1),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.ownerUserId, t.questionId] }),
    foreignKey({
      name: "working_profile_answers_owner_fk",
      columns: [t.organizationId, t.ownerUserId],
      foreignColumns: [members.organizationId, members.userId],
    }),
    check(
      "working_profile_answers_question_id_length",
      sql`char_length(${t.questionId}) between 1 and 128`,
    ),
    check(
      "working_profile_answers_question_text_length",
      sql`${t.questionText} is null or char_length(${t.questionText}) between 1 and 500`,
    ),
    check(
      "working_profile_answers_answer_length",
      sql`char_length(${t.answer}) between 1 and 10000`,
    ),
    check("working_profile_answers_version_positive", sql`${t.version} >= 1`),
    pgPolicy("working_profile_answers_owner_select", {
      for: "select",
      to: appRole,
      using: ownRow,
    }),
    pgPolicy("working_profile_answers_owner_insert", {
      for: "insert",
      to: appRole,
      withCheck: ownRow,
    }),
    pgPolicy("working_profile_answers_owner_update", {
      for: "update",
      to: appRole,
      using: ownRow,
      withCheck: ownRow,
    }),
  ],
);
