import {
  checkAnswer,
  checkQuestion,
  displayQuestion,
  type Locale,
  type NorthCode,
  type QuestionSource,
  resolveQuestionId,
} from "@north/agent-runtime";
import { and, eq, ne, or, type SQL, sql } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { definerFunction, MANAGER_GUARD } from "./definer.ts";
import { callManagerOnly } from "./manager-only.ts";
import { prepareStatement, runStatement, type StatementBuilder, timestampOf } from "./prepared.ts";
import {
  workingProfileAnswers as answers,
  currentOrganizationId,
  currentUserId,
} from "./schema/index.ts";
import type { Tenant } from "./tenant.ts";

export interface SaveAnswerParams {
  owner: Tenant;
  /** Raw question as the model sent it; sanitized and bounded here. */
  question: string;
  /** Raw answer as the model sent it; sanitized and bounded here. */
  answer: string;
  questionId?: string;
  expectedVersion?: number;
}

export type SaveAnswerResult =
  | { outcome: "created" | "updated" | "noop"; questionId: string; answerVersion: number }
  | { outcome: "conflict"; code: "NORTH_CONFLICT"; questionId: string; answerVersion: number }
  | {
      outcome: "rejected";
      code: Exclude<NorthCode, "NORTH_CONFLICT" | "NORTH_RATE_LIMITED">;
      message: string;
      questionId?: string;
    };

const INT4_MAX = 2_147_483_647;

/**
 * Saves one answer following every row of the SPEC §4 state table.
 *
 * No read-then-write race: a create is `INSERT … ON CONFLICT DO NOTHING`, a correction is one
 * `UPDATE … WHERE version = $expected AND pair differs`, and only when that write touches no row
 * do we read the row to say why (noop, conflict, or missing). Under READ COMMITTED the losing
 * writers of a race re-check the `WHERE` against the winner's row, so exactly one wins.
 */
export async function saveAnswer(tx: Tx, params: SaveAnswerParams): Promise<SaveAnswerResult> {
  const question = checkQuestion(params.question);
  if (!question.ok) return { outcome: "rejected", code: question.code, message: question.message };
  const answer = checkAnswer(params.answer);
  if (!answer.ok) return { outcome: "rejected", code: answer.code, message: answer.message };
  const resolved = resolveQuestionId(params.questionId, question.value);
  if (!resolved.ok) return { outcome: "rejected", code: resolved.code, message: resolved.message };

  const { questionId, kind } = resolved.value;
  const { organizationId, userId } = params.owner;
  const key = and(
    eq(answers.organizationId, organizationId),
    eq(answers.ownerUserId, userId),
    eq(answers.questionId, questionId),
  );
  const pair = { questionText: question.value, answer: answer.value };
  const settle = async () => {
    const [current] = await tx
      .select({
        questionText: answers.questionText,
        answer: answers.answer,
        version: answers.version,
      })
      .from(answers)
      .where(key);
    if (!current) return undefined;
    const same = current.questionText === pair.questionText && current.answer === pair.answer;
    return same
      ? ({ outcome: "noop", questionId, answerVersion: current.version } as const)
      : ({
          outcome: "conflict",
          code: "NORTH_CONFLICT",
          questionId,
          answerVersion: current.version,
        } as const);
  };

  if (params.expectedVersion === undefined) {
    if (kind !== "caller-auto") {
      const [created] = await runStatement(tx, CREATE_ANSWER, {
        organizationId,
        ownerUserId: userId,
        questionId,
        ...pair,
      });
      if (created) return { outcome: "created", questionId, answerVersion: created.version };
    }
    const settled = await settle();
    if (settled) return settled;
    return {
      outcome: "rejected",
      code: "NORTH_ID_RESERVED",
      questionId,
      message:
        "No entry exists under this auto: id. Omit question_id to create a new entry; auto: ids are only for updating entries North created.",
    };
  }

  const expected = params.expectedVersion;
  if (!Number.isSafeInteger(expected) || expected < 1) {
    throw new TypeError("expectedVersion must be a positive integer");
  }
  if (expected <= INT4_MAX) {
    const [updated] = await tx
      .update(answers)
      .set({ ...pair, version: sql`${answers.version} + 1`, updatedAt: sql`now()` })
      .where(
        and(
          key,
          eq(answers.version, expected),
          or(
            sql`${answers.questionText} is distinct from ${pair.questionText}`,
            ne(answers.answer, pair.answer),
          ),
        ),
      )
      .returning({ version: answers.version });
    if (updated) return { outcome: "updated", questionId, answerVersion: updated.version };
  }
  const settled = await settle();
  if (settled) return settled;
  return {
    outcome: "rejected",
    code: "NORTH_TARGET_MISSING",
    questionId,
    message:
      "There is no entry to update under this question_id. To create one, resend without expected_version.",
  };
}

export interface ProfileEntry {
  questionId: string;
  question: string;
  questionSource: QuestionSource;
  answer: string;
  answerVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A create: the new row's version, or no row when the question id is taken. */
const CREATE_ANSWER = prepareStatement<
  {
    organizationId: string;
    ownerUserId: string;
    questionId: string;
    questionText: string;
    answer: string;
  },
  { version: number }
>(
  ["organizationId", "ownerUserId", "questionId", "questionText", "answer"],
  (db, p) =>
    db.insert(answers).values(p).onConflictDoNothing().returning({ version: answers.version }),
  (row) => ({ version: Number(row.version) }),
);

/** A profile row as the reads select it. */
interface ProfileRow {
  questionId: string;
  /** Null on rows saved before the question text was recorded (SPEC §6). */
  questionText: string | null;
  answer: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A profile read: the rows `where` picks, oldest first (the order `positionOf` pages in). */
const selectProfile = (db: StatementBuilder, where: SQL | undefined) =>
  db
    .select({
      questionId: answers.questionId,
      questionText: answers.questionText,
      answer: answers.answer,
      version: answers.version,
      createdAt: answers.createdAt,
      updatedAt: answers.updatedAt,
    })
    .from(answers)
    .where(where)
    .orderBy(answers.createdAt, answers.questionId);

const profileRowOf = (row: Record<string, unknown>): ProfileRow => ({
  questionId: String(row.question_id),
  questionText: row.question_text === null ? null : String(row.question_text),
  answer: String(row.answer),
  version: Number(row.version),
  createdAt: timestampOf(row.created_at),
  updatedAt: timestampOf(row.updated_at),
});

/** `owner`'s rows. */
const READ_PROFILE = prepareStatement<{ organizationId: string; ownerUserId: string }, ProfileRow>(
  ["organizationId", "ownerUserId"],
  (db, p) =>
    selectProfile(
      db,
      and(eq(answers.organizationId, p.organizationId), eq(answers.ownerUserId, p.ownerUserId)),
    ),
  profileRowOf,
);

/**
 * The transaction's own tenant's rows: the tenant read from the settings the transaction's head
 * set, as the row policy does, so the statement has no parameters and PostgreSQL plans it once
 * per connection (prepared on a tenant transaction's connection; behind a transaction pooler it
 * is planned each time, as every statement there). With the tenant as parameters, a connection
 * that first ran it on a small table switched to planning it anew on every call once the table
 * grew (its generic plan then looked dearer than the early custom ones; decision 042).
 */
const READ_OWN_PROFILE = prepareStatement<Record<string, never>, ProfileRow>(
  [],
  (db) =>
    selectProfile(
      db,
      and(
        eq(answers.organizationId, currentOrganizationId),
        eq(answers.ownerUserId, currentUserId),
      ),
    ),
  profileRowOf,
);

/** Every row of `owner`'s profile, oldest first, with no row limit (an export reads any member's). */
export async function readProfile(
  tx: Tx,
  params: { owner: Tenant; locale?: Locale },
): Promise<ProfileEntry[]> {
  const rows = await runStatement(tx, READ_PROFILE, {
    organizationId: params.owner.organizationId,
    ownerUserId: params.owner.userId,
  });
  return rows.map((row) => entryOf(row, params.locale));
}

/**
 * The profile of the transaction's own tenant (a tool call's caller), oldest first, with no row
 * limit: in a tenant transaction (`withTenant`) only; anywhere else no tenant is set and it
 * reads nothing.
 */
export async function readOwnProfile(
  tx: Tx,
  params: { locale?: Locale } = {},
): Promise<ProfileEntry[]> {
  const rows = await runStatement(tx, READ_OWN_PROFILE, {});
  return rows.map((row) => entryOf(row, params.locale));
}

const entryOf = (row: ProfileRow, locale: Locale | undefined): ProfileEntry => ({
  questionId: row.questionId,
  ...displayQuestion(row.questionId, row.questionText, locale),
  answer: row.answer,
  answerVersion: row.version,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export interface AdminProfileEntry extends ProfileEntry {
  ownerUserId: string;
  ownerEmail: string;
}

export type AdminProfilesResult = { ok: true; entries: AdminProfileEntry[] } | { ok: false };

interface AdminRow extends Record<string, unknown> {
  owner_user_id: string;
  owner_email: string;
  question_id: string;
  question_text: string | null;
  answer: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/**
 * Every member's rows for a manager, through `working_profile_answers_for_admin`. A requester who
 * is not a manager of the tenant's organization gets `{ ok: false }`.
 */
export async function readProfilesForAdmin(
  tx: Tx,
  params: { organizationId: string; requesterId: string; locale?: Locale },
): Promise<AdminProfilesResult> {
  const rows = await callManagerOnly<AdminRow>(
    tx,
    sql`select * from public.working_profile_answers_for_admin(${params.organizationId}::uuid, ${params.requesterId}::uuid)`,
  );
  if (!rows) return { ok: false };
  return {
    ok: true,
    entries: rows.map((row) => ({
      ownerUserId: row.owner_user_id,
      ownerEmail: row.owner_email,
      questionId: row.question_id,
      ...displayQuestion(row.question_id, row.question_text, params.locale),
      answer: row.answer,
      answerVersion: row.version,
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
    })),
  };
}

export const ADMIN_FUNCTION = "working_profile_answers_for_admin";

/**
 * Every member's working profile for a manager (SPEC §6).
 *
 * Owner bypass: this function is SECURITY DEFINER and owned by `forma`, which owns
 * `working_profile_answers` and `members`. Both tables have RLS enabled but not forced, so the
 * owner's reads skip the owner-only policy; that is the only reason this sees other members'
 * rows. Forcing RLS on those tables, or changing either owner, silently empties its result.
 * The schema's policy comment (schema/working-profile.ts) names the same dependency.
 */
export const adminProfilesDefiner = definerFunction({
  name: ADMIN_FUNCTION,
  params: "p_organization_id uuid, p_requester_id uuid",
  returns: `TABLE (
  owner_user_id uuid,
  owner_email text,
  question_id text,
  question_text text,
  answer text,
  version integer,
  created_at timestamptz,
  updated_at timestamptz
)`,
  volatility: "STABLE",
  body: `BEGIN
${MANAGER_GUARD}
  RETURN QUERY
    SELECT a.owner_user_id, m.email, a.question_id, a.question_text, a.answer, a.version,
           a.created_at, a.updated_at
    FROM public.working_profile_answers a
    JOIN public.members m ON m.organization_id = a.organization_id AND m.user_id = a.owner_user_id
    WHERE a.organization_id = p_organization_id
    ORDER BY m.email, a.created_at, a.question_id;
END`,
});
