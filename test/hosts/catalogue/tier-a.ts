// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/hosts/tier-a.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/hosts/tier-a.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model first-onboarding" },
    mutation: {
      in: "createMcpServer",
      find: "      messages: prompt.render(parsed.data).map((m) => ({",
      replace: "      messages: prompt.render(parsed.data).slice(1).map((m) => ({",
      why: "the onboard prompt expands to nothing, so `/mcp__north__onboard` starts no onboarding",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model adapted-questions" },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "and(eq(answers.organizationId, p.organizationId), eq(answers.ownerUserId, p.ownerUserId)),",
      replace:
        "and(eq(answers.organizationId, p.organizationId), ne(answers.ownerUserId, p.ownerUserId)),",
      why: "the profile read misses the lawyer's own rows, so known questions are suggested again",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model requested-continuation" },
    mutation: {
      file: "packages/db/src/working-profile.ts",
      find: "  ...displayQuestion(row.questionId, row.questionText, locale),",
      replace: "  ...displayQuestion(row.questionId, null, locale),",
      why: "the read ignores the recorded wording and shows bank wording or the legacy label",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model proactive-follow-up" },
    mutation: {
      in: "QUESTION_MAX_CHARS",
      find: "export const QUESTION_MAX_CHARS = 500;",
      replace: "export const QUESTION_MAX_CHARS = 50;",
      why: "a careless question bound refuses an ordinary follow-up question",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model unrelated-custom-question" },
    mutation: {
      in: "autoQuestionId",
      find: '  return AUTO_ID_PREFIX + createHash("sha256").update(sanitizedQuestion, "utf8").digest("hex");',
      replace: '  return createHash("sha256").update(sanitizedQuestion, "utf8").digest("hex");',
      why: "custom questions get a bare hash as id instead of an auto: id",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model new-session-continuation" },
    mutation: {
      in: "saveAnswer",
      find: '      if (created) return { outcome: "created", questionId, answerVersion: created.version };',
      replace:
        '      if (created) return { outcome: "noop", questionId, answerVersion: created.version };',
      why: "a new entry's receipt says noop, so the model is told nothing new was saved",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model stale-conflict-correction" },
    mutation: {
      in: "saveAnswer",
      find: "          eq(answers.version, expected),",
      replace: "",
      why: "the correction's compare-and-set skips the version check, so a stale save wins silently",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model decline-stop" },
    mutation: {
      in: "transaction",
      find: "          result.audit.outcome,",
      replace: '          "created",',
      why: "the ledger records every call as a creation, reads included",
      // A read's audit row goes out with its statement (`last`), a write's after it: both paths.
      also: [
        {
          in: "transaction",
          find: "const event = audit(note.outcome, note.target, note.affected, note.reason);",
          replace: 'const event = audit("created", note.target, note.affected, note.reason);',
        },
      ],
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model dont-know" },
    mutation: {
      in: "ANSWER_MAX_CHARS",
      find: "export const ANSWER_MAX_CHARS = 10_000;",
      replace: "export const ANSWER_MAX_CHARS = 20;",
      why: "a careless answer bound refuses a one-sentence answer",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model every-suggestion-answered" },
    mutation: {
      in: "suggestQuestions",
      find: "  return QUESTION_BANK.filter((entry) => !answered.has(entry.id)).map((entry) => ({",
      replace: "  return QUESTION_BANK.filter(() => answered !== undefined).map((entry) => ({",
      why: "suggested questions are not filtered by the answered ids",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model rate-limit-recovery" },
    mutation: {
      in: "runAudited",
      find: "  if (!decision.allowed) return refuse(decision.retryAfterS);",
      replace: "",
      why: "the limiter is asked but never refuses a call",
    },
  },
  {
    check: {
      file: SUITE,
      name: "Tier A cases with the scripted model disclosure-before-first-custom-save",
    },
    mutation: {
      in: "DISCLOSURE",
      find: "and is visible to the workspace's managers\";",
      replace: '";',
      why: "North's words stop saying that managers can see the answers (lead's words: re-anchor)",
    },
  },
  {
    check: { file: SUITE, name: "Tier A cases with the scripted model skip-stop-later" },
    mutation: {
      in: "resolveQuestionId",
      find: "  if (raw === undefined) {",
      replace: '  if (raw === undefined || raw !== "") {',
      why: "a caller-sent question id is ignored and replaced by an auto id",
    },
  },
];

export const SUITES = [SUITE];
