// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of working-profile.acceptance.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/working-profile.acceptance.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 1. shows suggestions on an empty profile and keeps the model's own wording",
    },
    mutation: {
      in: "displayQuestion",
      find: "if (recorded !== null) return",
      replace: "if (recorded !== null && !findBankQuestion(questionId)) return",
      why: "a bank id reads with the bank's wording instead of the words the model recorded",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 2. returns three rows plus the remaining suggestions, then four rows after a save",
    },
    mutation: {
      in: "suggestQuestions",
      find: "!answered.has(entry.id)",
      replace: "!answered.has(entry.wording[locale])",
      why: "suggestions filtered by wording instead of id, so reworded answers never drop out",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 3. keeps a custom question in the profile, out of the suggestions, and in the admin projection",
    },
    mutation: {
      in: "suggestQuestions",
      find: "QUESTION_BANK.filter((entry) => !answered.has(entry.id))",
      replace: "QUESTION_BANK.slice(answered.size)",
      why: "suggestions skip one bank question per saved answer, custom ones included",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 4. drops answered bank ids from suggestions and never reports completion",
    },
    mutation: {
      in: "readWorkingProfile",
      find: "...(suggested ? { suggested_questions: suggested } : {}),",
      replace:
        "...(suggested ? { suggested_questions: suggested, complete: suggested.length === 0 } : {}),",
      why: "the 'next' view reports a completion flag once the bank is answered",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 5. corrects v1 to v2, then refuses a stale correction and leaves the row alone",
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
      name: "SPEC §9 acceptance through the tools 6. saves an identical answer twice as one row, one version, and a noop",
    },
    mutation: {
      in: "saveWorkingProfileAnswer",
      find: 'isError: receipt.outcome === "rejected" || receipt.outcome === "conflict",',
      replace: 'isError: receipt.outcome !== "created" && receipt.outcome !== "updated",',
      why: "a noop receipt is flagged as an error",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 7. shows nothing of one lawyer's rows to a colleague or another organization",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "and(eq(answers.organizationId, p.organizationId), eq(answers.ownerUserId, p.ownerUserId)),",
      replace: "eq(answers.organizationId, p.organizationId),",
      why: "read the organization's rows, not the owner's: owner filter dropped from the read and from the select policy",
      also: [
        {
          file: "drizzle/0005_source_names.sql",
          find: "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_user_id = nullif(current_setting('north.user_id', true), '')::uuid);",
          replace:
            "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid);",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 9. keeps the same question under ctx-a, ctx-b and no id as three rows",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/save.ts",
      find: "      questionId: input.question_id,\n",
      replace: "",
      why: "the save tool forgets to pass question_id on: every save is keyed by its question",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 10. follows the id rules: conflicts, question-only updates, auto ids, owners",
    },
    mutation: {
      in: "saveAnswer",
      find: 'if (kind !== "caller-auto") {',
      replace: "{",
      why: "let a caller-sent auto: id insert a row",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 11. rejects an expected version for an absent id and creates nothing",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: '  if (settled) return settled;\n  return {\n    outcome: "rejected",\n    code: "NORTH_TARGET_MISSING",',
      replace:
        '  if (settled) return settled;\n  const [made] = await tx\n    .insert(answers)\n    .values({ organizationId, ownerUserId: userId, questionId, ...pair })\n    .onConflictDoNothing()\n    .returning({ version: answers.version });\n  if (made) return { outcome: "created", questionId, answerVersion: made.version };\n  return {\n    outcome: "rejected",\n    code: "NORTH_TARGET_MISSING",',
      why: "insert when the correcting UPDATE finds no row",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 12. resolves concurrent saves: one create, one winning correction",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "db.insert(answers).values(p).onConflictDoNothing().returning({ version: answers.version }),",
      replace: "db.insert(answers).values(p).returning({ version: answers.version }),",
      why: "a plain INSERT without ON CONFLICT: parallel identical creates hit the primary key",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 13. answers lost-response retries with the same id, version and timestamps",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "db.insert(answers).values(p).onConflictDoNothing().returning({ version: answers.version }),",
      replace:
        "db.insert(answers).values(p).onConflictDoUpdate({ target: [answers.organizationId, answers.ownerUserId, answers.questionId], set: { updatedAt: sql`now()` } }).returning({ version: answers.version }),",
      why: "an upsert that touches updated_at on a repeated create",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 15. reads legacy rows with bank wording or the label, and 101 rows in full",
    },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "        eq(answers.ownerUserId, currentUserId),\n      ),\n    ),\n  profileRowOf,",
      replace:
        "        eq(answers.ownerUserId, currentUserId),\n      ),\n    ).limit(100),\n  profileRowOf,",
      why: "put a LIMIT 100 on the tool calls' profile read",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools 17. enforces the bounds with receipts and writes no row for a refusal",
    },
    mutation: {
      in: "checkQuestion",
      find: "if (length > QUESTION_MAX_CHARS) {",
      replace: "if (length >= QUESTION_MAX_CHARS) {",
      why: "off by one: a 500-character question is refused",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools fails schema validation before the handler for a missing required field",
    },
    mutation: {
      in: "callTool",
      find: "const parsed = tool.inputSchema.safeParse(args ?? {});",
      replace: "const parsed = tool.inputSchema.partial().safeParse(args ?? {});",
      why: "validate arguments with every field optional, so a missing one reaches the handler",
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools never takes identity from input: an organization or owner field is ignored",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/save.ts",
      find: "      owner: ctx.tenant,\n",
      replace:
        "      owner: {\n        organizationId: input.organization_id ?? ctx.tenant.organizationId,\n        userId: input.owner_id ?? ctx.tenant.userId,\n      },\n",
      why: "accept organization_id/owner_id in the input (schema passthrough) and save as them",
      also: [
        {
          file: "apps/mcp-server/src/capabilities/working-profile/save.ts",
          in: "inputSchema",
          find: "const inputSchema = z.object({",
          replace: "const inputSchema = z.looseObject({",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE,
      name: "SPEC §9 acceptance through the tools says an unversioned save found an existing entry, not that it changed since a read",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/save.ts",
      find: "  return expectedVersion === undefined\n",
      replace: "  return false\n",
      why: "tell every conflict it changed since it was read, even when nothing was read",
    },
  },
];
