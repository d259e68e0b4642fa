// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of working-profile.integration.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "../../../test/support/catalogue.ts";

export const SUITE = "packages/db/src/working-profile.integration.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table creates version 1 when no expected version is sent and no row exists",
    },
    mutation: {
      file: "drizzle/0001_initial.sql",
      find: '"version" integer DEFAULT 1 NOT NULL,',
      replace: '"version" integer DEFAULT 0 NOT NULL,',
      why: "versions start at 0",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table returns noop with the current version for an unversioned save of the same pair",
    },
    mutation: {
      in: "saveAnswer",
      find: "current.answer === pair.answer;",
      replace: "current.answer !== pair.answer;",
      why: "flip the answer comparison that tells noop from conflict",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table returns conflict with the current version for an unversioned save of a different pair",
    },
    mutation: {
      in: "saveAnswer",
      find: "const same = current.questionText === pair.questionText && current.answer === pair.answer;",
      replace: "const same = current.questionText === pair.questionText;",
      why: "compare questions only: a different answer to the same question is a noop",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table updates to version + 1 under the same id when the expected version is current",
    },
    mutation: {
      in: "saveAnswer",
      find: ".set({ ...pair, version: sql`${answers.version} + 1`, updatedAt: sql`now()` })",
      replace: ".set({ ...pair, updatedAt: sql`now()` })",
      why: "forget to bump the version on a correction",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table counts a question-only change as a difference",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "          or(\n            sql`${answers.questionText} is distinct from ${pair.questionText}`,\n            ne(answers.answer, pair.answer),\n          ),",
      replace: "          ne(answers.answer, pair.answer),",
      why: "the correcting UPDATE only looks for a changed answer",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table returns noop when the expected version is current and the pair is equal",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "          or(\n            sql`${answers.questionText} is distinct from ${pair.questionText}`,\n            ne(answers.answer, pair.answer),\n          ),\n",
      replace: "",
      why: "drop the pair-differs condition: an identical correction bumps the version",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table returns noop and leaves timestamps alone for an exact retry of a committed update",
    },
    mutation: {
      in: "saveAnswer",
      find: "const same = current.questionText === pair.questionText && current.answer === pair.answer;",
      replace:
        "const same =\n      current.questionText === pair.questionText &&\n      current.answer === pair.answer &&\n      (params.expectedVersion === undefined || current.version === params.expectedVersion);",
      why: "treat a retry carrying the old expected_version as a conflict",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table returns conflict when the expected version is stale and the pair differs",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "          eq(answers.version, expected),\n",
      replace: "",
      why: "drop the expected-version check from the correcting UPDATE",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: the SPEC §4 state table rejects any expected version for an absent id and creates nothing (case 11)",
    },
    mutation: {
      in: "saveAnswer",
      find: "  if (expected <= INT4_MAX) {",
      replace: "  {",
      why: "drop the int4 guard: a huge expected_version reaches PostgreSQL and fails",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) keeps the same question under ctx-a, ctx-b and no id as three rows",
    },
    mutation: {
      in: "saveAnswer",
      find: "const resolved = resolveQuestionId(params.questionId, question.value);",
      replace: "const resolved = resolveQuestionId(undefined, question.value);",
      why: "key every save by its question, ignoring question_id",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) lets a returned auto id drive a versioned correction and its retry",
    },
    mutation: {
      in: "AUTO_ID",
      find: "const AUTO_ID = /^auto:[0-9a-f]{64}$/;",
      replace: "const AUTO_ID = /^auto:[0-9a-f]{40}$/;",
      why: "recognise auto ids by a SHA-1 length, so North's own ids are refused as reserved",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) rejects a caller-sent auto id that names no row, with or without a version",
    },
    mutation: {
      in: "resolveQuestionId",
      find: '{ questionId: raw, kind: "caller-auto" }',
      replace: '{ questionId: raw, kind: "explicit" }',
      why: "treat a well-formed auto id sent by the caller like an explicit id",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) keeps the same explicit id under another owner as a separate row",
    },
    mutation: {
      file: "drizzle/0005_source_names.sql",
      find: 'PRIMARY KEY("organization_id","owner_user_id","question_id")',
      replace: 'PRIMARY KEY("organization_id","question_id")',
      why: "key answers by organization and id, forgetting the owner",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) accepts a 500-character question and a 128-character id",
    },
    mutation: {
      file: "drizzle/0005_source_names.sql",
      find: 'char_length("working_profile_answers"."question_text") between 1 and 500',
      replace: 'octet_length("working_profile_answers"."question_text") between 1 and 500',
      why: "bound the question in bytes instead of characters",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) rejects with NORTH_ANSWER_EMPTY and writes no row",
    },
    mutation: {
      in: "dropUnsafe",
      find: '.replace(CONTROL, (c) => (c === "\\n" ? c : ""))',
      replace: "",
      why: "stop dropping control characters when sanitizing",
    },
  },
  {
    check: {
      file: SUITE,
      name: "question ids (cases 9, 10, 17) rejects with NORTH_ID_INVALID and writes no row",
    },
    mutation: {
      in: "EXPLICIT_ID",
      find: "const EXPLICIT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;",
      replace: "const EXPLICIT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;",
      why: "explicit ids of any length (the column's CHECK then fails instead of a receipt)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "lost responses (case 13) answers a retried create with the same id and version and untouched timestamps",
    },
    mutation: {
      in: "saveAnswer",
      find: 'if (created) return { outcome: "created", questionId, answerVersion: created.version };',
      replace: 'return { outcome: "created", questionId, answerVersion: created?.version ?? 1 };',
      why: "report created whether or not the insert wrote a row",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: what a refusal or a stale save tells the caller returns conflict for an unversioned save that changes only the question",
    },
    mutation: {
      in: "saveAnswer",
      find: "const same = current.questionText === pair.questionText && current.answer === pair.answer;",
      replace: "const same = current.answer === pair.answer;",
      why: "compare answers only when settling a refused save",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: what a refusal or a stale save tells the caller throws on an expected version that is not a positive integer, before touching the row",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "  if (!Number.isSafeInteger(expected) || expected < 1) {\n",
      replace: "  if (false) {\n",
      why: "send any number as the expected version to SQL",
    },
  },
  {
    check: {
      file: SUITE,
      name: "saveAnswer: what a refusal or a stale save tells the caller names the parameter to drop when an update or an auto id finds no entry",
    },
    mutation: {
      in: "saveAnswer",
      find: '"There is no entry to update under this question_id. To create one, resend without expected_version."',
      replace: '"There is no entry to update under this question_id."',
      why: "refuse without saying what to resend",
    },
  },
  {
    check: {
      file: SUITE,
      name: "readProfilesForAdmin gives a manager every member's entries with owner, version and dates",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "      ownerUserId: row.owner_user_id,\n",
      replace: "      ownerUserId: row.owner_email,\n",
      why: "map the admin projection's owner from the wrong column",
    },
  },
  {
    check: { file: SUITE, name: "readProfilesForAdmin answers an ordinary member with ok: false" },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "  if (!rows) return { ok: false };\n",
      replace: "  if (!rows) return { ok: true, entries: [] };\n",
      why: "answer a refused member with an empty list, as if allowed",
    },
  },
  {
    check: {
      file: SUITE,
      name: "readOwnProfile: the tool calls' read of the caller's own profile reads the transaction's own tenant's rows only, and nothing outside a tenant transaction",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "runStatement(tx, READ_OWN_PROFILE, {})",
      replace: "runStatement(tx, READ_OWN_PROFILE, {}).then(() => [])",
      why: "the own-profile read answers no rows",
    },
  },
  {
    check: {
      file: SUITE,
      name: "readOwnProfile: the tool calls' read of the caller's own profile has no parameters, so each connection plans it once: never a custom plan per call",
    },
    mutation: {
      file: "packages/db/src/prepared.ts",
      find: "await connection.unsafe(statement.text, values as never, EXTENDED)",
      replace: "await connection.unsafe(statement.text, values as never)",
      why: "a statement without parameters goes out as a simple query, parsed and planned on every call",
    },
  },
];
