import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const TIER_A = "test/hosts/tier-a.test.ts";

const SERVER = "apps/mcp-server/src/server.ts";
const TOOL_RUNNER = "apps/mcp-server/src/tool-runner.ts";
const STORE = "packages/db/src/working-profile.ts";
const BOUNDS = "packages/agent-runtime/src/bounds.ts";
const QUESTION_ID = "packages/agent-runtime/src/question-id.ts";
const PROFILE_VIEW = "packages/agent-runtime/src/profile-view.ts";
const ONBOARDING = "packages/agent-runtime/src/onboarding.ts";

/** The scripted Tier A run: one `it.each` over the cases, one entry per case. */
const CASE = (id: string) => ({ file: TIER_A, name: `Tier A cases with the scripted model ${id}` });

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [TIER_A];

export const MUTATIONS: readonly Entry[] = [
  // Issue 22, point 7: North's side of each conversational case, through the real Claude Code.
  {
    check: CASE("first-onboarding"),
    mutation: {
      file: SERVER,
      why: "the onboard prompt expands to nothing, so `/mcp__north__onboard` starts no onboarding",
      find: "      messages: prompt.render(parsed.data).map((m) => ({",
      replace: "      messages: prompt.render(parsed.data).slice(1).map((m) => ({",
    },
  },
  {
    check: CASE("adapted-questions"),
    mutation: {
      file: STORE,
      why: "the profile read misses the lawyer's own rows, so known questions are suggested again",
      find: "and(eq(answers.organizationId, p.organizationId), eq(answers.ownerUserId, p.ownerUserId)),",
      replace:
        "and(eq(answers.organizationId, p.organizationId), ne(answers.ownerUserId, p.ownerUserId)),",
    },
  },
  {
    check: CASE("requested-continuation"),
    mutation: {
      file: STORE,
      why: "the read ignores the recorded wording and shows bank wording or the legacy label",
      find: "    ...displayQuestion(row.questionId, row.questionText, params.locale),",
      replace: "    ...displayQuestion(row.questionId, null, params.locale),",
    },
  },
  {
    check: CASE("proactive-follow-up"),
    mutation: {
      file: BOUNDS,
      why: "a careless question bound refuses an ordinary follow-up question",
      find: "export const QUESTION_MAX_CHARS = 500;",
      replace: "export const QUESTION_MAX_CHARS = 50;",
    },
  },
  {
    check: CASE("unrelated-custom-question"),
    mutation: {
      file: QUESTION_ID,
      why: "custom questions get a bare hash as id instead of an auto: id",
      find: '  return AUTO_ID_PREFIX + createHash("sha256").update(sanitizedQuestion, "utf8").digest("hex");',
      replace: '  return createHash("sha256").update(sanitizedQuestion, "utf8").digest("hex");',
    },
  },
  {
    check: CASE("new-session-continuation"),
    mutation: {
      file: STORE,
      why: "a new entry's receipt says noop, so the model is told nothing new was saved",
      find: '      if (created) return { outcome: "created", questionId, answerVersion: created.version };',
      replace:
        '      if (created) return { outcome: "noop", questionId, answerVersion: created.version };',
    },
  },
  {
    check: CASE("stale-conflict-correction"),
    mutation: {
      file: STORE,
      why: "the correction's compare-and-set skips the version check, so a stale save wins silently",
      find: "          eq(answers.version, expected),",
      replace: "",
    },
  },
  {
    check: CASE("decline-stop"),
    mutation: {
      file: TOOL_RUNNER,
      why: "the ledger records every call as a creation, reads included",
      find: "          result.audit.outcome,",
      replace: '          "created",',
    },
  },
  {
    check: CASE("dont-know"),
    mutation: {
      file: BOUNDS,
      why: "a careless answer bound refuses a one-sentence answer",
      find: "export const ANSWER_MAX_CHARS = 10_000;",
      replace: "export const ANSWER_MAX_CHARS = 20;",
    },
  },
  {
    check: CASE("every-suggestion-answered"),
    mutation: {
      file: PROFILE_VIEW,
      why: "suggested questions are not filtered by the answered ids",
      find: "  return QUESTION_BANK.filter((entry) => !answered.has(entry.id)).map((entry) => ({",
      replace: "  return QUESTION_BANK.filter(() => answered !== undefined).map((entry) => ({",
    },
  },
  {
    check: CASE("rate-limit-recovery"),
    mutation: {
      file: TOOL_RUNNER,
      why: "the limiter is asked but never refuses a call",
      find: "  if (!decision.allowed) return refuse(decision.retryAfterS);",
      replace: "",
    },
  },
  {
    check: CASE("disclosure-before-first-custom-save"),
    mutation: {
      file: ONBOARDING,
      why: "North's words stop saying that managers can see the answers (lead's words: re-anchor)",
      find: "and is visible to the workspace's managers\";",
      replace: '";',
    },
  },
  {
    check: CASE("skip-stop-later"),
    mutation: {
      file: QUESTION_ID,
      why: "a caller-sent question id is ignored and replaced by an auto id",
      find: "  if (raw === undefined) {",
      replace: '  if (raw === undefined || raw !== "") {',
    },
  },
];
