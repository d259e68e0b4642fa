// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * For each check (one `it`, or one `it.each`) of the acceptance and integration suites, a
 * mutation of product code that turns it red — the kind of change a careless developer makes.
 * `bun run test:acceptance-mutations` (scripts/try-mutations.ts) tries every entry and writes the
 * per-check table of docs/acceptance.md from the results.
 *
 * - `check.name` is the test's full name as vitest reports it: describe titles and the test
 *   title joined by spaces; for an `it.each`, one of its cases (the one the mutation targets).
 * - `find` must occur exactly once where the edit is anchored (checked before every try): in
 *   `file`, inside the declaration `in`, or anywhere in the product when neither is given.
 *   Whitespace may differ (formatting never breaks an entry); when code changes, the entry fails
 *   loudly until it is updated.
 * - `also` holds further edits of the same change, for checks that pin two layers at once
 *   (a grant and a policy, a schema and a handler): breaking one layer alone leaves them green.
 * - Product code only: apps/, packages/, the migrations in drizzle/ and what North ships to
 *   hosts (plugins/, .claude-plugin/, manifest.json) — never a test.
 */

import {
  PIPELINE_MUTATIONS,
  PIPELINE_SUITES,
} from "../packages/db/src/pipelined-transaction.catalogue.ts";
import { HOST_MUTATIONS, HOST_SUITES } from "../test/hosts/catalogue/index.ts";
import * as rememberedTokens from "../test/security/catalogue/remembered-tokens.ts";
import { SIGN_IN_MUTATIONS, SIGN_IN_SUITES } from "../test/sign-in/catalogue/index.ts";

export interface Check {
  /** Test file, from the repository root. */
  file: string;
  /** Full test name: describe titles + test title, space-separated, exactly as vitest reports. */
  name: string;
}

export interface Edit {
  /** Product file, from the repository root; absent: wherever in the product `find` is. */
  file?: string;
  /**
   * The declaration (function, const, class, type) whose text holds `find`, wherever it lives:
   * the anchor that survives moving code between files.
   */
  in?: string;
  /**
   * The text to change, matched exactly or with its whitespace laid out otherwise; must occur
   * exactly once where the edit is anchored (scripts/mutation-anchor.ts).
   */
  find: string;
  replace: string;
}

export interface Mutation extends Edit {
  /** One line: what the careless change is. */
  why: string;
  /** Further edits belonging to the same change. */
  also?: readonly Edit[];
}

export interface Entry {
  check: Check;
  mutation: Mutation;
}

/** A check no sensible product mutation turns red, and why (a weak test: say so). */
export interface NoMutation {
  check: Check;
  reason: string;
}

/** Every suite whose checks must each have an entry (or a reason in {@link NO_MUTATION}). */
export const SUITES: readonly string[] = [
  "test/working-profile.acceptance.test.ts",
  "test/memory.acceptance.test.ts",
  "test/contract.test.ts",
  "test/limiter-and-audit.test.ts",
  "test/transport.test.ts",
  "test/protocol-revisions.test.ts",
  "test/conformance.test.ts",
  "test/conformance-authorization.test.ts",
  "packages/db/src/working-profile.integration.test.ts",
  "packages/db/src/rls.integration.test.ts",
  "packages/db/src/provision.integration.test.ts",
  ...SIGN_IN_SUITES,
  ...HOST_SUITES,
  ...PIPELINE_SUITES,
  ...rememberedTokens.SUITES,
];

const WP_ACCEPTANCE = "test/working-profile.acceptance.test.ts";
const MEMORY = "test/memory.acceptance.test.ts";
const CONTRACT = "test/contract.test.ts";
const LIMITER = "test/limiter-and-audit.test.ts";
const TRANSPORT = "test/transport.test.ts";
const WP_STORE = "packages/db/src/working-profile.integration.test.ts";
const RLS = "packages/db/src/rls.integration.test.ts";
const PROVISION = "packages/db/src/provision.integration.test.ts";

const STORE = "packages/db/src/working-profile.ts";
/** The memory store is packages/db/src/memories/: its entries name their declaration. */
const MEMORY_STORE = undefined;
const PROVISIONING = "packages/db/src/provision.ts";
/** Definer functions live beside their domains' stores: entries find them anywhere. */
const DEFINERS = undefined;
const INITIAL_MIGRATION = "drizzle/0001_initial.sql";
const SOURCE_NAMES_MIGRATION = "drizzle/0005_source_names.sql";
const REMEMBER_TOOL = "apps/mcp-server/src/capabilities/memory/remember.ts";
const SCHEMAS = "apps/mcp-server/src/capabilities/memory/schemas.ts";
const QUESTION_TEXT_MIGRATION = "drizzle/0002_question_text.sql";
const MEMORY_MIGRATION = "drizzle/0004_memories.sql";
const APP = "apps/mcp-server/src/app.ts";
const MCP_ROUTES = "apps/mcp-server/src/routes/mcp.ts";
const HEALTH_ROUTES = "apps/mcp-server/src/routes/health.ts";
const MANIFEST_ROUTES = "apps/mcp-server/src/routes/manifest.ts";
const SERVER = "apps/mcp-server/src/server.ts";
const MANIFEST = "apps/mcp-server/src/manifest.ts";
const RUNNER = "apps/mcp-server/src/tool-runner.ts";
const SAVE_TOOL = "apps/mcp-server/src/capabilities/working-profile/save.ts";
const READ_TOOL = "apps/mcp-server/src/capabilities/working-profile/read.ts";
const GUARD = "apps/mcp-server/src/transport-guard.ts";
const CAPABILITIES = "apps/mcp-server/src/capabilities/index.ts";
const PROFILE_VIEW = "packages/agent-runtime/src/profile-view.ts";
const QUESTION_ID = "packages/agent-runtime/src/question-id.ts";
const BOUNDS = "packages/agent-runtime/src/bounds.ts";
const SANITIZE = "packages/agent-runtime/src/sanitize.ts";
const MEMORY_RULES = "packages/agent-runtime/src/memory-rules.ts";
const FENCE = "packages/agent-runtime/src/memory-fence.ts";
const ONBOARDING = "packages/agent-runtime/src/onboarding.ts";

const acceptance = (title: string): Check => ({
  file: WP_ACCEPTANCE,
  name: `SPEC §9 acceptance through the tools ${title}`,
});
const memory = (describe: string, title: string): Check => ({
  file: MEMORY,
  name: `${describe} ${title}`,
});
const contract = (describe: string, title: string): Check => ({
  file: CONTRACT,
  name: `${describe} ${title}`,
});
const transport = (title: string): Check => ({
  file: TRANSPORT,
  name: `transport safety ${title}`,
});
const revisions = (title: string): Check => ({
  file: "test/protocol-revisions.test.ts",
  name: `one North for every protocol revision ${title}`,
});
const MODERN_TO_2025: Mutation = {
  file: "apps/mcp-server/src/server.ts",
  find: '  return route.kind === "legacy";',
  replace: '  return route.kind !== "reject";',
  why: "serve every request on the 2025 transport, 2026-07-28 ones included",
};
const store = (describe: string, title: string): Check => ({
  file: WP_STORE,
  name: `${describe} ${title}`,
});
const rls = (title: string): Check => ({
  file: RLS,
  name: `row-level security matrix for the app login role ${title}`,
});
const provision = (describe: string, title: string): Check => ({
  file: PROVISION,
  name: `${describe} ${title}`,
});

const STATE_TABLE = "saveAnswer: the SPEC §4 state table";
const STALE_SAVES = "saveAnswer: what a refusal or a stale save tells the caller";
const STORE_ON_ITS_OWN = "the store on its own, below the tools";
const IDS = "question ids (cases 9, 10, 17)";
const ADMIN_FN = "working_profile_answers_for_admin";
const LOGIN = "the app login role";
const PROVISIONING_18 = "provisioning (case 18)";
const UPGRADE = `${PROVISIONING_18} upgrading a database from before question text was recorded`;

/** The tenant settings as the policies read them. */
const ORG_SETTING = "nullif(current_setting('north.organization_id', true), '')::uuid";
const USER_SETTING = "nullif(current_setting('north.user_id', true), '')::uuid";

export const MUTATIONS: readonly Entry[] = [
  // ---------------------------------------------------------------- working profile, through the tools
  {
    check: acceptance("1. shows suggestions on an empty profile and keeps the model's own wording"),
    mutation: {
      file: PROFILE_VIEW,
      find: "if (recorded !== null) return",
      replace: "if (recorded !== null && !findBankQuestion(questionId)) return",
      why: "a bank id reads with the bank's wording instead of the words the model recorded",
    },
  },
  {
    check: acceptance(
      "2. returns three rows plus the remaining suggestions, then four rows after a save",
    ),
    mutation: {
      file: PROFILE_VIEW,
      find: "!answered.has(entry.id)",
      replace: "!answered.has(entry.wording[locale])",
      why: "suggestions filtered by wording instead of id, so reworded answers never drop out",
    },
  },
  {
    check: acceptance(
      "3. keeps a custom question in the profile, out of the suggestions, and in the admin projection",
    ),
    mutation: {
      file: PROFILE_VIEW,
      find: "QUESTION_BANK.filter((entry) => !answered.has(entry.id))",
      replace: "QUESTION_BANK.slice(answered.size)",
      why: "suggestions skip one bank question per saved answer, custom ones included",
    },
  },
  {
    check: acceptance("4. drops answered bank ids from suggestions and never reports completion"),
    mutation: {
      file: READ_TOOL,
      find: "...(suggested ? { suggested_questions: suggested } : {}),",
      replace:
        "...(suggested ? { suggested_questions: suggested, complete: suggested.length === 0 } : {}),",
      why: "the 'next' view reports a completion flag once the bank is answered",
    },
  },
  {
    check: acceptance(
      "5. corrects v1 to v2, then refuses a stale correction and leaves the row alone",
    ),
    mutation: {
      file: STORE,
      find: "          eq(answers.version, expected),\n",
      replace: "",
      why: "drop the expected-version check from the correcting UPDATE",
    },
  },
  {
    check: acceptance("6. saves an identical answer twice as one row, one version, and a noop"),
    mutation: {
      file: SAVE_TOOL,
      find: 'isError: receipt.outcome === "rejected" || receipt.outcome === "conflict",',
      replace: 'isError: receipt.outcome !== "created" && receipt.outcome !== "updated",',
      why: "a noop receipt is flagged as an error",
    },
  },
  {
    check: acceptance(
      "7. shows nothing of one lawyer's rows to a colleague or another organization",
    ),
    mutation: {
      file: STORE,
      find: "and(eq(answers.organizationId, p.organizationId), eq(answers.ownerUserId, p.ownerUserId)),",
      replace: "eq(answers.organizationId, p.organizationId),",
      why: "read the organization's rows, not the owner's: owner filter dropped from the read and from the select policy",
      also: [
        {
          file: SOURCE_NAMES_MIGRATION,
          find: `"working_profile_answers_owner_select" ON "working_profile_answers" TO app_role USING (organization_id = ${ORG_SETTING} and owner_user_id = ${USER_SETTING});`,
          replace: `"working_profile_answers_owner_select" ON "working_profile_answers" TO app_role USING (organization_id = ${ORG_SETTING});`,
        },
      ],
    },
  },
  {
    check: acceptance("9. keeps the same question under ctx-a, ctx-b and no id as three rows"),
    mutation: {
      file: SAVE_TOOL,
      find: "      questionId: input.question_id,\n",
      replace: "",
      why: "the save tool forgets to pass question_id on: every save is keyed by its question",
    },
  },
  {
    check: acceptance(
      "10. follows the id rules: conflicts, question-only updates, auto ids, owners",
    ),
    mutation: {
      file: STORE,
      find: 'if (kind !== "caller-auto") {',
      replace: "{",
      why: "let a caller-sent auto: id insert a row",
    },
  },
  {
    check: acceptance("11. rejects an expected version for an absent id and creates nothing"),
    mutation: {
      file: STORE,
      find: '  if (settled) return settled;\n  return {\n    outcome: "rejected",\n    code: "NORTH_TARGET_MISSING",',
      replace:
        '  if (settled) return settled;\n  const [made] = await tx\n    .insert(answers)\n    .values({ organizationId, ownerUserId: userId, questionId, ...pair })\n    .onConflictDoNothing()\n    .returning({ version: answers.version });\n  if (made) return { outcome: "created", questionId, answerVersion: made.version };\n  return {\n    outcome: "rejected",\n    code: "NORTH_TARGET_MISSING",',
      why: "insert when the correcting UPDATE finds no row",
    },
  },
  {
    check: acceptance("12. resolves concurrent saves: one create, one winning correction"),
    mutation: {
      file: STORE,
      find: "db.insert(answers).values(p).onConflictDoNothing().returning({ version: answers.version }),",
      replace: "db.insert(answers).values(p).returning({ version: answers.version }),",
      why: "a plain INSERT without ON CONFLICT: parallel identical creates hit the primary key",
    },
  },
  {
    check: acceptance("13. answers lost-response retries with the same id, version and timestamps"),
    mutation: {
      file: STORE,
      find: "db.insert(answers).values(p).onConflictDoNothing().returning({ version: answers.version }),",
      replace:
        "db.insert(answers).values(p).onConflictDoUpdate({ target: [answers.organizationId, answers.ownerUserId, answers.questionId], set: { updatedAt: sql`now()` } }).returning({ version: answers.version }),",
      why: "an upsert that touches updated_at on a repeated create",
    },
  },
  {
    check: acceptance("15. reads legacy rows with bank wording or the label, and 101 rows in full"),
    mutation: {
      file: STORE,
      find: ".orderBy(answers.createdAt, answers.questionId),",
      replace: ".orderBy(answers.createdAt, answers.questionId)\n      .limit(100),",
      why: "put a LIMIT 100 on the profile read",
    },
  },
  {
    check: acceptance("17. enforces the bounds with receipts and writes no row for a refusal"),
    mutation: {
      file: BOUNDS,
      find: "if (length > QUESTION_MAX_CHARS) {",
      replace: "if (length >= QUESTION_MAX_CHARS) {",
      why: "off by one: a 500-character question is refused",
    },
  },
  {
    check: acceptance("fails schema validation before the handler for a missing required field"),
    mutation: {
      file: SERVER,
      find: "const parsed = tool.inputSchema.safeParse(args ?? {});",
      replace: "const parsed = tool.inputSchema.partial().safeParse(args ?? {});",
      why: "validate arguments with every field optional, so a missing one reaches the handler",
    },
  },
  {
    check: acceptance("never takes identity from input: an organization or owner field is ignored"),
    mutation: {
      file: SAVE_TOOL,
      find: "      owner: ctx.tenant,\n",
      replace:
        "      owner: {\n        organizationId: input.organization_id ?? ctx.tenant.organizationId,\n        userId: input.owner_id ?? ctx.tenant.userId,\n      },\n",
      why: "accept organization_id/owner_id in the input (schema passthrough) and save as them",
      also: [
        {
          file: SAVE_TOOL,
          find: "const inputSchema = z.object({",
          replace: "const inputSchema = z.looseObject({",
        },
      ],
    },
  },

  // ---------------------------------------------------------------- memory
  {
    check: memory(
      "20. the memory store",
      "refuses an observation, or a fact about a person, without a full subject",
    ),
    mutation: {
      file: MEMORY_RULES,
      find: 'return kind === "observation" ? required : { ok: true, value: null };',
      replace: "return { ok: true, value: null };",
      why: "an observation without a subject is stored without one",
    },
  },
  {
    check: memory("20. the memory store", "states which recall mode ran"),
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/recall.ts",
      find: "const embedded = query && embedder ? await embedText(embedder, query) : undefined;",
      replace: "const embedded = undefined;",
      why: "never embed the query: with an embedder, recall silently runs full-text",
    },
  },
  {
    check: memory(
      "20. the memory store",
      "lists everything held about a subject with provenance, and forgets it leaving tombstones",
    ),
    mutation: {
      file: MEMORY_RULES,
      find: "    .toUpperCase()\n    .toLowerCase()\n",
      replace: "",
      why: "the subject key is case-sensitive: 'ACME SAS' finds nothing held about 'Acme SAS'",
    },
  },
  {
    check: memory(
      "20. the memory store",
      "never recalls an expired memory, lists it as expired until purged, and purges its body",
    ),
    mutation: {
      in: "LIVE_MEMORY",
      find: "gt(memories.expiresAt, sql`now()`),",
      replace: "",
      why: "recall without `expires_at > now()`",
    },
  },
  {
    check: memory(
      "20. the memory store",
      "fences recalled memories with origin, date and the pinned sentence",
    ),
    mutation: {
      file: FENCE,
      find: "  MEMORY_NOT_A_REASON,\n",
      replace: "",
      why: "leave the pinned sentence out of the fence preamble",
    },
  },
  {
    check: memory(
      "isolation",
      "shares memories with every member of the organization and no other organization",
    ),
    mutation: {
      file: MEMORY_MIGRATION,
      find: `FOR SELECT TO "app_role" USING (organization_id = ${ORG_SETTING});`,
      replace: `FOR SELECT TO "app_role" USING (organization_id = ${ORG_SETTING} and author_id = ${USER_SETTING});`,
      why: "memories copied the profile's owner-only select policy: colleagues see nothing",
    },
  },
  {
    check: memory("isolation", "lets only the author or a manager forget a memory"),
    mutation: {
      file: MEMORY_STORE,
      find: "isManager ? sql`true` : eq(memories.authorId, requester.userId)",
      replace: "sql`true`",
      why: "any member may forget anyone's memory",
    },
  },
  {
    check: memory(
      "erasure",
      "removes a forgotten body from the database for every role, dump included",
    ),
    mutation: {
      file: MEMORY_STORE,
      find: "      body: null,\n      subjectId: null,\n",
      replace: "      body: null,\n",
      why: "forgetting keeps the subject's name in the tombstone",
    },
  },
  {
    check: memory("recall", "finds a French memory by a French word"),
    mutation: {
      file: DEFINERS,
      find: '  v_every := public.north_search_query(v_language, p_query, true, v_prefix);\n  IF v_every IS NULL THEN\n    RETURN;\n  END IF;\n  EXECUTE ${rankedSql("")}\n  INTO v_ids, v_ranks\n  USING v_every, v_organization_id, p_subject_fingerprint, p_subject_type, v_depth, v_candidates;\n  ${RETURN_RANKED}\n  IF coalesce(pg_catalog.cardinality(v_ids), 0) >= v_depth THEN\n    RETURN;\n  END IF;\n  -- Places left: the memories having some of the words. Asked only now, so a recall whose\n  -- every-word list is full (or whose query is one word) plans one statement, not two.\n  v_some := public.north_search_query(v_language, p_query, false, v_prefix);\n',
      replace:
        "  v_every := pg_catalog.websearch_to_tsquery('simple'::regconfig, p_query);\n  IF v_every IS NULL THEN\n    RETURN;\n  END IF;\n  EXECUTE ${rankedSql(\"\")}\n  INTO v_ids, v_ranks\n  USING v_every, v_organization_id, p_subject_fingerprint, p_subject_type, v_depth, v_candidates;\n  ${RETURN_RANKED}\n  IF coalesce(pg_catalog.cardinality(v_ids), 0) >= v_depth THEN\n    RETURN;\n  END IF;\n  -- Places left: the memories having some of the words. Asked only now, so a recall whose\n  -- every-word list is full (or whose query is one word) plans one statement, not two.\n  v_some := pg_catalog.websearch_to_tsquery('simple'::regconfig, replace(p_query, ' ', ' or '));\n",
      why: "full-text queries read word for word ('simple') against the stemmed, accent-folded index",
    },
  },
  {
    check: memory("recall", "returns newest first without a query, and respects the limit"),
    mutation: {
      file: MEMORY_STORE,
      find: ".orderBy(desc(memories.createdAt))\n      .limit(params.limit);",
      replace: ".orderBy(memories.createdAt)\n      .limit(params.limit);",
      why: "recency recall sorted oldest first",
    },
  },
  {
    check: memory("recall", "keeps the fenced block within the token budget"),
    mutation: {
      file: FENCE,
      find: "    if (used + cost > options.tokenBudget) return;\n",
      replace: "",
      why: "render every recalled memory whatever the token budget",
    },
  },
  {
    check: memory(
      "injection",
      "returns an instruction-like memory only inside the fenced block, labelled with its origin",
    ),
    mutation: {
      file: FENCE,
      find: ": ${quoted(memory.body)}`;",
      replace: ': "${memory.body}"`;',
      why: "quote the body by hand instead of JSON-escaping it: a newline forges a line, a tag closes the fence",
    },
  },
  {
    check: memory("briefing", "returns the caller's working profile and recent memories, fenced"),
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/briefing.ts",
      find: 'const rows = ctx.principal.scopes.includes("profile:write")',
      replace: 'const rows = !ctx.principal.scopes.includes("profile:write")',
      why: "inverted scope check: the briefing leaves out the profile of those who have one",
    },
  },

  // ---------------------------------------------------------------- contract
  {
    check: contract(
      "what each kind of principal is offered",
      "lists the tools and prompts of a 'read-only' principal",
    ),
    mutation: {
      file: CAPABILITIES,
      find: 'return all.filter((capability) => authorize(principal, "capability", capability.id, all).allowed);',
      replace: "return [...all];",
      why: "list every capability regardless of scopes",
    },
  },
  {
    check: contract(
      "what each kind of principal is offered",
      "8. refuses a read-only principal that calls the profile tools or the prompt anyway",
    ),
    mutation: {
      file: MCP_ROUTES,
      find: 'if (method !== "tools/call" && method !== "prompts/get") continue;',
      replace: 'if (method !== "tools/call") continue;',
      why: "only tools/call is scope-checked before the SDK; prompts/get slips past the 403",
    },
  },
  {
    check: contract(
      "what each kind of principal is offered",
      "answers a call outside the principal's scopes with 403 and an insufficient_scope challenge",
    ),
    mutation: {
      file: MCP_ROUTES,
      find: '(scope) => `${challenge}, error="insufficient_scope", scope="${scope}"`,',
      replace: "() => challenge,",
      why: "a 403 without the insufficient_scope challenge",
    },
  },
  {
    check: contract(
      "what each kind of principal is offered",
      "answers an unknown tool with a JSON-RPC error naming scopes, not a crash",
    ),
    mutation: {
      file: SERVER,
      find: "    if (!tool) {\n      throw new ProtocolError(",
      replace: "    if (false) {\n      throw new ProtocolError(",
      why: "drop the unknown-tool guard: the call crashes on an undefined tool",
    },
  },
  {
    check: contract(
      "what each kind of principal is offered",
      "gives the onboard prompt its title and an optional locale",
    ),
    mutation: {
      file: MANIFEST,
      find: "required: !schema.safeParse(undefined).success,",
      replace: "required: true,",
      why: "publish every prompt argument as required",
    },
  },
  {
    check: contract(
      "server instructions",
      "name both profile tools and carry the disclosure for a profile writer",
    ),
    mutation: {
      file: ONBOARDING,
      find: " before the first save, tell the lawyer that ${DISCLOSURE}. Never invent",
      replace: " Never invent",
      why: "trim the disclosure from the server guidance",
    },
  },
  {
    check: contract("server instructions", "imply no completion anywhere the model reads"),
    mutation: {
      file: READ_TOOL,
      find: "\"Only for view 'next': bank questions not answered yet.",
      replace: "\"Only for view 'next': the remaining bank questions.",
      why: "describe suggestions as what 'remains' to answer",
    },
  },
  {
    check: contract(
      "server instructions",
      "say nothing about the working profile to a read-only principal",
    ),
    mutation: {
      file: MANIFEST,
      find: "  return {\n    instructions: composeInstructions(capabilities),",
      replace: "  return {\n    instructions: composeInstructions(all),",
      why: "compose the manifest's instructions from every capability, not the active ones",
    },
  },
  {
    check: contract("capability ownership", "gives every tool exactly one capability"),
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/index.ts",
      find: "tools: [createBriefingTool(deps), createRecallTool(deps), heldTool],",
      replace: "tools: [createBriefingTool(deps), createRecallTool(deps), heldTool, forgetTool],",
      why: "offer forget to memory readers too",
    },
  },
  {
    check: contract("capability ownership", "memory-read's guidance names only tools it owns"),
    mutation: {
      file: ONBOARDING,
      find: "call ${HELD_TOOL} and show all of it.`",
      replace: "call ${HELD_TOOL} and show all of it; to erase it, call ${FORGET_TOOL}.`",
      why: "reading guidance tells the model to call the writing capability's forget tool",
    },
  },
  {
    check: contract(
      "capability ownership",
      "catches guidance that names a tool its capability does not own",
    ),
    mutation: {
      file: CAPABILITIES,
      find: "const own = new Set(capability.tools.map((tool) => tool.name));",
      replace:
        "const own = new Set(CAPABILITIES.flatMap((c) => c.tools).map((tool) => tool.name));",
      why: "check guidance against every known tool instead of the capability's own",
    },
  },
  {
    check: contract(
      "published tool schemas",
      "north__working_profile_answer matches its reviewed snapshot",
    ),
    mutation: {
      file: SAVE_TOOL,
      find: 'retry_after_s: z.number().int().optional().describe("For NORTH_RATE_LIMITED: seconds to wait."),',
      replace:
        'retry_after_s: z.number().optional().describe("For NORTH_RATE_LIMITED: seconds to wait."),',
      why: "loosen retry_after_s from integer to number in the published output schema",
    },
  },
  {
    check: contract(
      "published tool schemas",
      "marks the read tool read-only and idempotent, and the save tool idempotent and not destructive",
    ),
    mutation: {
      file: "apps/mcp-server/src/capabilities/annotations.ts",
      find: "  readOnlyHint: false,\n  destructiveHint: false,\n  idempotentHint: true,\n",
      replace: "  readOnlyHint: false,\n  destructiveHint: false,\n  idempotentHint: false,\n",
      why: "annotate the save tool (and remember, which shares its annotations) as not idempotent",
    },
  },
  {
    check: contract(
      "published tool schemas",
      "serves the same manifest at GET /manifest as the model receives over MCP",
    ),
    mutation: {
      file: MANIFEST_ROUTES,
      find: 'composeManifest(c.get("principal"), options.capabilities, {',
      replace:
        'composeManifest({ ...c.get("principal"), scopes: ["profile:write", "memory:read", "memory:write", "admin"] }, options.capabilities, {',
      why: "GET /manifest shows every tool whatever the token's scopes",
    },
  },

  // ---------------------------------------------------------------- limiter and audit
  {
    check: {
      file: LIMITER,
      name: "14. the Redis limiter with one write per window refuses the second save with a receipt, writes no row, audits it, and lets it through after the window",
    },
    mutation: {
      file: RUNNER,
      in: "runAudited",
      find: 'await auditOnly(audit("rate_limited", target)).catch(',
      replace: "await Promise.resolve().catch(",
      why: "skip the audit row of a rate-limited call",
    },
  },
  {
    check: {
      file: LIMITER,
      name: "16. the audit sentinel keeps question, answer and id text out of audit rows, logs and Redis keys across outcomes",
    },
    mutation: {
      file: RUNNER,
      find: '        latencyMs: Math.round(ctx.now() - started),\n      },\n      "tool call",',
      replace:
        '        latencyMs: Math.round(ctx.now() - started),\n        input,\n      },\n      "tool call",',
      why: "log the tool input in the runner",
    },
  },
  {
    check: {
      file: LIMITER,
      name: "every call that reaches a handler is audited exactly once writes one row per read and per save, with the request id",
    },
    mutation: {
      file: RUNNER,
      find: "const tail = audited && ((result: T) => [auditStatement(audited(result))]);",
      replace:
        'const tail = audited && ((result: T) => (tool.kind === "write" ? [auditStatement(audited(result))] : []));',
      why: "audit writes only, not reads",
      also: [
        {
          file: RUNNER,
          find: "return finishWith(tx, [auditStatement(event)], statement);",
          replace: "return finishWith(tx, [], statement);",
        },
      ],
    },
  },

  // ---------------------------------------------------------------- transport
  {
    check: transport("answers an initialize with JSON and no session id (stateless)"),
    mutation: {
      file: SERVER,
      find: "sessionIdGenerator: undefined,",
      replace: "sessionIdGenerator: () => randomUUID(),",
      why: "hand out session ids from a stateless server",
    },
  },
  {
    check: transport(
      "refuses a foreign Origin, or our host name on another port, with 403; accepts its own origin or none",
    ),
    mutation: {
      file: GUARD,
      find: "!ownOrigins(host).includes(origin.toLowerCase()) &&",
      replace: '!origin.toLowerCase().startsWith("http://localhost") &&',
      why: "accept any origin on our host name, whatever its port",
    },
  },
  {
    check: transport("refuses an unknown Host with 403 (DNS rebinding)"),
    mutation: {
      file: GUARD,
      find: "if (!host || !hosts.has(hostname(host))) {",
      replace: "if (!host) {",
      why: "require a Host header but accept any host",
    },
  },
  {
    check: transport("refuses a body over 1 MiB with 413 before parsing it"),
    mutation: {
      file: APP,
      find: "export const MAX_BODY_BYTES = 1024 * 1024;",
      replace: "export const MAX_BODY_BYTES = 1024 * 1024 * 1024;",
      why: "a unit slip lifts the body cap to 1 GiB",
    },
  },
  {
    check: transport("answers 401 with a Bearer challenge without a token, even with a session id"),
    mutation: {
      file: APP,
      find: 'res: new Response(null, { status: 401, headers: { "WWW-Authenticate": challenge } }),',
      replace: "res: new Response(null, { status: 401 }),",
      why: "a 401 without the Bearer challenge",
    },
  },
  {
    check: transport("refuses a token in the query string"),
    mutation: {
      file: APP,
      find: 'for (const name of ["access_token", "token", "api_key"]) {',
      replace: 'for (const name of ["token", "api_key"]) {',
      why: "forget access_token among the refused query parameters",
    },
  },
  {
    check: transport("answers GET and DELETE /mcp with 405 for a stateless server"),
    mutation: {
      file: MCP_ROUTES,
      find: '  app.delete("/mcp", notAllowed);\n',
      replace: "",
      why: "forget the DELETE /mcp route (404 instead of 405)",
    },
  },
  {
    check: transport(
      "turns an internal failure into JSON-RPC -32603 with no detail, audited and logged without the body",
    ),
    mutation: {
      file: "packages/db/src/pg-errors.ts",
      find: "    errorType: error.name,\n    code:",
      replace: "    errorType: error.name,\n    message: error.message,\n    code:",
      why: "log an error's message, which for a driver error quotes the query's parameters",
    },
  },
  {
    check: transport("reports health and readiness"),
    mutation: {
      file: HEALTH_ROUTES,
      find: ': limiter.degraded || embedder?.state === "degraded"',
      replace: ': !limiter.degraded || embedder?.state === "degraded"',
      why: "inverted condition: a healthy limiter reports degraded",
    },
  },
  {
    check: transport("requires authentication for the manifest"),
    mutation: {
      file: APP,
      find: '  app.get("/manifest", authenticate);\n',
      replace: "",
      why: "serve the manifest without authentication",
    },
  },

  // ---------------------------------------------------------------- store (integration)
  {
    check: store(
      STATE_TABLE,
      "creates version 1 when no expected version is sent and no row exists",
    ),
    mutation: {
      file: INITIAL_MIGRATION,
      find: '"version" integer DEFAULT 1 NOT NULL,',
      replace: '"version" integer DEFAULT 0 NOT NULL,',
      why: "versions start at 0",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "returns noop with the current version for an unversioned save of the same pair",
    ),
    mutation: {
      file: STORE,
      find: "current.answer === pair.answer;",
      replace: "current.answer !== pair.answer;",
      why: "flip the answer comparison that tells noop from conflict",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "returns conflict with the current version for an unversioned save of a different pair",
    ),
    mutation: {
      file: STORE,
      find: "const same = current.questionText === pair.questionText && current.answer === pair.answer;",
      replace: "const same = current.questionText === pair.questionText;",
      why: "compare questions only: a different answer to the same question is a noop",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "updates to version + 1 under the same id when the expected version is current",
    ),
    mutation: {
      file: STORE,
      find: ".set({ ...pair, version: sql`${answers.version} + 1`, updatedAt: sql`now()` })",
      replace: ".set({ ...pair, updatedAt: sql`now()` })",
      why: "forget to bump the version on a correction",
    },
  },
  {
    check: store(STATE_TABLE, "counts a question-only change as a difference"),
    mutation: {
      file: STORE,
      find: "          or(\n            sql`${answers.questionText} is distinct from ${pair.questionText}`,\n            ne(answers.answer, pair.answer),\n          ),",
      replace: "          ne(answers.answer, pair.answer),",
      why: "the correcting UPDATE only looks for a changed answer",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "returns noop when the expected version is current and the pair is equal",
    ),
    mutation: {
      file: STORE,
      find: "          or(\n            sql`${answers.questionText} is distinct from ${pair.questionText}`,\n            ne(answers.answer, pair.answer),\n          ),\n",
      replace: "",
      why: "drop the pair-differs condition: an identical correction bumps the version",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "returns noop and leaves timestamps alone for an exact retry of a committed update",
    ),
    mutation: {
      file: STORE,
      find: "const same = current.questionText === pair.questionText && current.answer === pair.answer;",
      replace:
        "const same =\n      current.questionText === pair.questionText &&\n      current.answer === pair.answer &&\n      (params.expectedVersion === undefined || current.version === params.expectedVersion);",
      why: "treat a retry carrying the old expected_version as a conflict",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "returns conflict when the expected version is stale and the pair differs",
    ),
    mutation: {
      file: STORE,
      find: "          eq(answers.version, expected),\n",
      replace: "",
      why: "drop the expected-version check from the correcting UPDATE",
    },
  },
  {
    check: store(
      STATE_TABLE,
      "rejects any expected version for an absent id and creates nothing (case 11)",
    ),
    mutation: {
      file: STORE,
      find: "  if (expected <= INT4_MAX) {",
      replace: "  {",
      why: "drop the int4 guard: a huge expected_version reaches PostgreSQL and fails",
    },
  },
  {
    check: store(IDS, "keeps the same question under ctx-a, ctx-b and no id as three rows"),
    mutation: {
      file: STORE,
      find: "const resolved = resolveQuestionId(params.questionId, question.value);",
      replace: "const resolved = resolveQuestionId(undefined, question.value);",
      why: "key every save by its question, ignoring question_id",
    },
  },
  {
    check: store(IDS, "lets a returned auto id drive a versioned correction and its retry"),
    mutation: {
      file: QUESTION_ID,
      find: "const AUTO_ID = /^auto:[0-9a-f]{64}$/;",
      replace: "const AUTO_ID = /^auto:[0-9a-f]{40}$/;",
      why: "recognise auto ids by a SHA-1 length, so North's own ids are refused as reserved",
    },
  },
  {
    check: store(IDS, "rejects a caller-sent auto id that names no row, with or without a version"),
    mutation: {
      file: QUESTION_ID,
      find: '{ questionId: raw, kind: "caller-auto" }',
      replace: '{ questionId: raw, kind: "explicit" }',
      why: "treat a well-formed auto id sent by the caller like an explicit id",
    },
  },
  {
    check: store(IDS, "keeps the same explicit id under another owner as a separate row"),
    mutation: {
      file: SOURCE_NAMES_MIGRATION,
      find: 'PRIMARY KEY("organization_id","owner_user_id","question_id")',
      replace: 'PRIMARY KEY("organization_id","question_id")',
      why: "key answers by organization and id, forgetting the owner",
    },
  },
  {
    check: store(IDS, "accepts a 500-character question and a 128-character id"),
    mutation: {
      file: SOURCE_NAMES_MIGRATION,
      find: 'char_length("working_profile_answers"."question_text") between 1 and 500',
      replace: 'octet_length("working_profile_answers"."question_text") between 1 and 500',
      why: "bound the question in bytes instead of characters",
    },
  },
  {
    check: store(IDS, "rejects with NORTH_ANSWER_EMPTY and writes no row"),
    mutation: {
      file: SANITIZE,
      find: '.replace(CONTROL, (c) => (c === "\\n" ? c : ""))',
      replace: "",
      why: "stop dropping control characters when sanitizing",
    },
  },
  {
    check: store(IDS, "rejects with NORTH_ID_INVALID and writes no row"),
    mutation: {
      file: QUESTION_ID,
      find: "const EXPLICIT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;",
      replace: "const EXPLICIT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;",
      why: "explicit ids of any length (the column's CHECK then fails instead of a receipt)",
    },
  },
  {
    check: store(
      "lost responses (case 13)",
      "answers a retried create with the same id and version and untouched timestamps",
    ),
    mutation: {
      file: STORE,
      find: 'if (created) return { outcome: "created", questionId, answerVersion: created.version };',
      replace: 'return { outcome: "created", questionId, answerVersion: created?.version ?? 1 };',
      why: "report created whether or not the insert wrote a row",
    },
  },

  // ---------------------------------------------------------------- row-level security
  {
    check: rls("'working_profile_answers' × 'select' × 'same-org user' → +0"),
    mutation: {
      file: SOURCE_NAMES_MIGRATION,
      find: `"working_profile_answers_owner_select" ON "working_profile_answers" TO app_role USING (organization_id = ${ORG_SETTING} and owner_user_id = ${USER_SETTING});`,
      replace: `"working_profile_answers_owner_select" ON "working_profile_answers" TO app_role USING (organization_id = ${ORG_SETTING});`,
      why: "remove `owner_id = current user` from the profile's select policy",
    },
  },
  {
    check: rls("'memories' × 'insert' × 'same-org user' → 'denied'"),
    mutation: {
      file: MEMORY_MIGRATION,
      find: `FOR INSERT TO "app_role" WITH CHECK (organization_id = ${ORG_SETTING} and author_id = ${USER_SETTING});`,
      replace: `FOR INSERT TO "app_role" WITH CHECK (organization_id = ${ORG_SETTING});`,
      why: "memories may be written in a colleague's name",
    },
  },
  {
    check: rls("'audit_events' × 'insert' × 'other org' → 'denied'"),
    mutation: {
      file: INITIAL_MIGRATION,
      find: `WITH CHECK (organization_id = ${ORG_SETTING} and actor_id is not distinct from ${USER_SETTING});`,
      replace: "WITH CHECK (true);",
      why: "the ledger accepts rows for any organization and actor",
    },
  },
  {
    check: rls("'working_profile_answers' × 'delete' × 'own' → 'denied'"),
    mutation: {
      file: PROVISIONING,
      find: 'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",',
      replace:
        'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at), DELETE",',
      why: "grant DELETE on profile rows (without a policy it deletes nothing instead of being refused)",
    },
  },
  {
    check: rls("refuses an update that moves an own row to another organization"),
    mutation: {
      file: PROVISIONING,
      find: 'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",',
      replace: 'privileges: "SELECT, INSERT, UPDATE",',
      why: "grant UPDATE on every column, keys included (policies still refuse, but later)",
    },
  },
  {
    check: rls("refuses an update that hands an own row to another owner"),
    mutation: {
      file: PROVISIONING,
      find: 'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",',
      replace:
        'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at, owner_user_id)",',
      why: "add owner_user_id to the columns app_role may update",
    },
  },
  {
    check: rls("reads nothing from working_profile_answers without tenant context"),
    mutation: {
      file: PROVISIONING,
      find: "await sql.unsafe(`ALTER TABLE ${name} ENABLE ROW LEVEL SECURITY`);",
      replace: "await sql.unsafe(`ALTER TABLE ${name} DISABLE ROW LEVEL SECURITY`);",
      why: "provisioning leaves row-level security off",
    },
  },
  {
    check: rls("reads nothing after a tenant transaction on the same pooled connection has ended"),
    mutation: {
      file: SOURCE_NAMES_MIGRATION,
      find: `"working_profile_answers_owner_select" ON "working_profile_answers" TO app_role USING (organization_id = ${ORG_SETTING} and owner_user_id = ${USER_SETTING});`,
      replace:
        "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = current_setting('north.organization_id', true)::uuid and owner_user_id = current_setting('north.user_id', true)::uuid);",
      why: "cast the tenant settings without nullif: the '' an ended transaction leaves breaks the read",
    },
  },

  // ---------------------------------------------------------------- provisioning (integration)
  {
    check: provision(LOGIN, "is not superuser, has no BYPASSRLS, and is a member of app_role only"),
    mutation: {
      file: PROVISIONING,
      find: "await sql.unsafe(`ALTER ROLE ${login} LOGIN INHERIT ${locked}`);",
      replace: "await sql.unsafe(`ALTER ROLE ${login} LOGIN INHERIT BYPASSRLS`);",
      why: "give the login role BYPASSRLS (the admin screen's shortcut)",
    },
  },
  {
    check: provision(LOGIN, "owns nothing in the database"),
    mutation: {
      file: PROVISIONING,
      find: "await sql.unsafe(`ALTER TABLE ${name} OWNER TO forma`);",
      replace: "await sql.unsafe(`ALTER TABLE ${name} OWNER TO ${login}`);",
      why: "hand the tables to the login role",
    },
  },
  {
    check: provision(LOGIN, "cannot SET ROLE forma"),
    mutation: {
      file: PROVISIONING,
      find: 'await sql.unsafe("GRANT USAGE ON SCHEMA public TO app_role");',
      replace:
        'await sql.unsafe("GRANT USAGE ON SCHEMA public TO app_role");\n      await sql.unsafe("GRANT forma TO app_role");',
      why: "make app_role a member of forma (the login role then reaches it through app_role)",
    },
  },
  {
    check: provision(LOGIN, "may only insert into the audit table"),
    mutation: {
      file: PROVISIONING,
      find: '{ table: auditEvents, privileges: "INSERT" },',
      replace: '{ table: auditEvents, privileges: "SELECT, INSERT" },',
      why: "let the app role read the ledger",
    },
  },
  {
    check: provision(ADMIN_FN, "is SECURITY DEFINER, owned by forma, with a pinned search_path"),
    mutation: {
      file: DEFINERS,
      find: "SET search_path = pg_catalog, pg_temp$",
      replace: "SET search_path = public, pg_catalog, pg_temp$",
      why: "put public on the definer functions' search_path",
    },
  },
  {
    check: provision(
      ADMIN_FN,
      "resolve_api_token grants EXECUTE to app_role and not to PUBLIC, and is owned by forma",
    ),
    mutation: {
      file: PROVISIONING,
      find: "        await sql.unsafe(`REVOKE ALL ON FUNCTION ${qualified} FROM PUBLIC`);\n",
      replace: "",
      why: "forget to revoke EXECUTE from PUBLIC on the definer functions",
    },
  },
  {
    check: provision(
      ADMIN_FN,
      "shows a manager every member of their organization and nothing of another (case 19)",
    ),
    mutation: {
      file: DEFINERS,
      find: "    WHERE a.organization_id = p_organization_id\n    ORDER BY m.email",
      replace: "    ORDER BY m.email",
      why: "drop the organization filter from the admin function",
    },
  },
  {
    check: provision(ADMIN_FN, "refuses an ordinary member, and the transaction carries on"),
    mutation: {
      file: "packages/db/src/manager-only.ts",
      find: "return await tx.transaction(async (inner) => [...(await inner.execute<Row>(call))] as Row[]);",
      replace: "return [...(await tx.execute<Row>(call))] as Row[];",
      why: "call the manager-only function without a savepoint: its refusal aborts the caller's transaction",
    },
  },
  {
    check: provision(
      ADMIN_FN,
      "gives a manager the organization's audit events and refuses an ordinary member",
    ),
    mutation: {
      file: DEFINERS,
      find: "      AND m.role = 'manager'\n      AND m.removed_at IS NULL\n  ) THEN",
      replace: "      AND m.removed_at IS NULL\n  ) THEN",
      why: "drop the manager check from the manager-only functions",
    },
  },
  {
    check: provision(ADMIN_FN, "refuses a requester who is not the transaction's tenant"),
    mutation: {
      file: DEFINERS,
      find: "\n     OR p_requester_id IS DISTINCT FROM nullif(current_setting('north.user_id', true), '')::uuid THEN",
      replace: " THEN",
      why: "the manager-only guard no longer ties the requester to the transaction's user",
    },
  },
  {
    check: provision(ADMIN_FN, "ignores temporary tables that shadow the names it uses"),
    mutation: {
      file: DEFINERS,
      find: "    SELECT 1 FROM public.members m\n    WHERE m.organization_id = p_organization_id\n",
      replace: "    SELECT 1 FROM members m\n    WHERE m.organization_id = p_organization_id\n",
      why: "drop the `public.` qualifier from the manager check",
    },
  },
  {
    check: provision(
      "legacy rows and size (case 15)",
      "reads null question text with bank wording or the legacy label, and 101 rows in full",
    ),
    mutation: {
      file: DEFINERS,
      find: "    ORDER BY m.email, a.created_at, a.question_id;\n",
      replace: "    ORDER BY m.email, a.created_at, a.question_id\n    LIMIT 100;\n",
      why: "put a LIMIT in the admin function",
    },
  },
  {
    check: provision(
      PROVISIONING_18,
      "creates the function on a fresh install, and a rerun changes nothing",
    ),
    mutation: {
      file: PROVISIONING,
      find: "        for (const { signature } of overloads) await sql.unsafe(`DROP FUNCTION ${signature}`);\n",
      replace: "",
      why: "re-create the functions without dropping the old definitions: a rerun fails",
    },
  },
  {
    check: provision(PROVISIONING_18, "lets four concurrent runs all succeed with the same result"),
    mutation: {
      file: PROVISIONING,
      find: "      await sql`select pg_advisory_xact_lock(${PROVISION_LOCK_KEY})`;\n",
      replace: "",
      why: "provision without the advisory lock",
    },
  },
  {
    check: provision(
      PROVISIONING_18,
      "lets two concurrent migrations both succeed and apply each migration once",
    ),
    mutation: {
      file: "packages/db/src/migrate.ts",
      find: "    await client`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;\n",
      replace: "",
      why: "migrate without the advisory lock",
    },
  },
  {
    check: provision(
      UPGRADE,
      "refuses to drop a function something depends on, and changes nothing",
    ),
    mutation: {
      file: PROVISIONING,
      find: "await sql.unsafe(`DROP FUNCTION ${signature}`);",
      replace: "await sql.unsafe(`DROP FUNCTION ${signature} CASCADE`);",
      why: "`DROP FUNCTION … CASCADE`",
    },
  },
  {
    check: provision(
      UPGRADE,
      "replaces the old definition with owner, search_path, revoke and grant restored",
    ),
    mutation: {
      file: PROVISIONING,
      find: "        await sql.unsafe(`ALTER FUNCTION ${qualified} OWNER TO forma`);\n",
      replace: "",
      why: "re-create the functions without handing them back to forma",
    },
  },
  {
    check: provision(
      UPGRADE,
      "carries old rows across and keeps accepting old-shape inserts, read with the fallback",
    ),
    mutation: {
      file: QUESTION_TEXT_MIGRATION,
      find: 'ADD COLUMN "question" text;',
      replace: "ADD COLUMN \"question\" text NOT NULL DEFAULT 'Question';",
      why: "backfill question text with a placeholder and require it",
    },
  },
  // ------------------------------------------------------- added with issues 10 and 11
  {
    check: acceptance(
      "says an unversioned save found an existing entry, not that it changed since a read",
    ),
    mutation: {
      file: SAVE_TOOL,
      find: "  return expectedVersion === undefined\n",
      replace: "  return false\n",
      why: "tell every conflict it changed since it was read, even when nothing was read",
    },
  },
  {
    check: memory(
      "20. the memory store",
      "refuses expires_in_days outside 1–365 at the schema, storing nothing",
    ),
    mutation: {
      file: REMEMBER_TOOL,
      find: "    .min(1)\n    .max(MAX_MEMORY_EXPIRY_DAYS)\n",
      replace: "",
      why: "publish expires_in_days without its bounds (only the handler checks them)",
    },
  },
  {
    check: memory(
      "20. the memory store",
      "answers a lookup tool's argument error without claiming anything about saving",
    ),
    mutation: {
      file: MEMORY_RULES,
      find: '"Send subject_id (and subject_type to narrow it to one kind of subject)."',
      replace: '"Send subject_id. Nothing was saved."',
      why: "reuse the write-time refusal on a lookup",
    },
  },
  {
    check: memory(
      STORE_ON_ITS_OWN,
      "refuses a blank body, an expiry out of range and a malformed conversation id, storing nothing",
    ),
    mutation: {
      file: MEMORY_STORE,
      find: "  const days = checkExpiryDays(params.expiresInDays);\n  if (!days.ok) return reject(days);\n",
      replace: "  const days = { value: params.expiresInDays ?? 90 };\n",
      why: "trust the tool's schema and stop checking the expiry in the store",
    },
  },
  {
    check: memory(
      STORE_ON_ITS_OWN,
      "stores a subject and recalls by its fingerprint only the memories about it",
    ),
    mutation: {
      file: MEMORY_STORE,
      find: "    live.push(eq(memories.subjectFingerprint, params.subjectFingerprint));\n",
      replace: "",
      why: "ignore the subject when recalling",
    },
  },
  {
    check: memory(STORE_ON_ITS_OWN, "treats a blank query as no query and recalls by recency"),
    mutation: {
      file: MEMORY_STORE,
      find: "  const query = params.query?.trim();\n",
      replace: "  const query = params.query;\n",
      why: "search for a blank query instead of recalling by recency",
    },
  },
  {
    check: memory(STORE_ON_ITS_OWN, "answers forgetting an already forgotten memory with noop"),
    mutation: {
      file: MEMORY_STORE,
      find: '  if (existing.forgottenAt || existing.purgedAt) {\n    return { outcome: "noop", forgotten: 0, remaining: 0 };\n  }\n',
      replace: "",
      why: "refuse a repeated erasure as forbidden instead of a noop",
    },
  },
  {
    check: memory(
      STORE_ON_ITS_OWN,
      "explains a refusal to forget an unknown id or another member's memory",
    ),
    mutation: {
      file: MEMORY_STORE,
      find: '      message: "No memory has this id in this workspace.",\n',
      replace: '      message: "",\n',
      why: "refuse without saying why",
    },
  },
  {
    check: memory(
      STORE_ON_ITS_OWN,
      "re-keys only the fingerprints that changed, keeps tombstones' and counts both",
    ),
    mutation: {
      file: MEMORY_STORE,
      find: "      return next === row.subjectFingerprint ? [] : [{ id: row.id, next }];\n",
      replace: "      return [{ id: row.id, next }];\n",
      why: "rewrite every fingerprint, changed or not, and report them all as re-keyed",
    },
  },
  {
    check: memory(
      STORE_ON_ITS_OWN,
      "reclaims space with VACUUM, and with VACUUM FULL when asked, reporting what ran",
    ),
    mutation: {
      file: MEMORY_STORE,
      find: '  if (!owner?.may) skipped.push(options.full ? "vacuum full" : "vacuum");\n',
      replace: "",
      why: "say nothing when the connection may not vacuum (PostgreSQL only warns)",
    },
  },
  {
    check: contract(
      "what each kind of principal is offered",
      "writes the French prompt without an English sentence",
    ),
    mutation: {
      file: ONBOARDING,
      find: "    \"Avant d'enregistrer quoi que ce soit, dis-moi que ce que tu enregistres est ta transcription de mes propos et que les responsables de l'espace de travail peuvent le voir.\",",
      replace: "    `Avant d'enregistrer quoi que ce soit, dis-moi que ${DISCLOSURE}.`,",
      why: "reuse the English disclosure inside the French prompt",
    },
  },
  {
    check: contract(
      "what each kind of principal is offered",
      "keeps the English prompt in the lawyer's own voice",
    ),
    mutation: {
      file: ONBOARDING,
      find: '    "Before you save anything, tell me that what you save is your transcription of my words and that the workspace\'s managers can see it.",',
      replace: "    `Before you save anything, tell me that ${DISCLOSURE}.`,",
      why: "speak of 'the lawyer' in a prompt the lawyer sends",
    },
  },
  {
    check: contract(
      "server instructions",
      "open with the safety rules and end with the data-boundary and honesty reminder for a 'full' principal",
    ),
    mutation: {
      file: CAPABILITIES,
      find: "    ...SAFETY_RULES,\n    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n",
      replace:
        "    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n    ...SAFETY_RULES,\n",
      why: "put the safety rules last, where Claude Code's 2,048-character cut drops them",
    },
  },
  {
    check: contract(
      "server instructions",
      "give one order at the start of a conversation: the briefing first, which holds the profile",
    ),
    mutation: {
      file: CAPABILITIES,
      find: "    createMemoryReadCapability(memory),\n    workingProfileCapability,\n",
      replace: "    workingProfileCapability,\n    createMemoryReadCapability(memory),\n",
      why: "compose the profile's guidance before the briefing's",
    },
  },
  {
    check: contract(
      "server instructions",
      "cover special categories of personal data in the safety rules and the remember tool",
    ),
    mutation: {
      file: ONBOARDING,
      find: "health, trade-union membership, religious or philosophical beliefs, political opinions, sex life or orientation, racial or ethnic origin, criminal offences",
      replace: "sensitive details",
      why: "leave the special categories unnamed",
    },
  },
  {
    check: contract(
      "published tool schemas",
      "does not state a write-time rule on the lookup tools' subject fields",
    ),
    mutation: {
      file: SCHEMAS,
      find: "`Optional: narrows the lookup to one kind of subject,",
      replace:
        "`Required with subject_id for every observation. Optional: narrows the lookup to one kind of subject,",
      why: "copy the write tool's subject rule onto the lookups",
    },
  },
  {
    check: contract(
      "published tool schemas",
      "states the expiry bound in the published schema, not only in its text",
    ),
    mutation: {
      file: REMEMBER_TOOL,
      find: "    .min(1)\n    .max(MAX_MEMORY_EXPIRY_DAYS)\n",
      replace: "",
      why: "state 1–365 only in the description",
    },
  },
  {
    check: contract(
      "capability activations in GET /manifest",
      "shows the working profile off with scope_off and semantic recall off with no_embedder for a read-only token",
    ),
    mutation: {
      file: CAPABILITIES,
      find: '        ? "no_embedder"\n',
      replace: "        ? undefined\n",
      why: "report semantic recall active without an embedder",
    },
  },
  {
    check: contract(
      "capability activations in GET /manifest",
      "turns semantic recall on when an embedder is configured, and off again without the scope",
    ),
    mutation: {
      file: CAPABILITIES,
      find: "          ? `degraded:${options.embedderFailure}`\n",
      replace: "          ? undefined\n",
      why: "report a failing embedder as healthy",
    },
  },
  {
    check: transport("accepts a browser origin configured exactly, and only that port"),
    mutation: {
      file: GUARD,
      find: "      !origins.has(origin.toLowerCase()) &&\n",
      replace: '      !origins.has(origin.toLowerCase().replace(/:\\d+$/, "")) &&\n',
      why: "compare configured origins without their port",
    },
  },
  {
    check: store(
      STALE_SAVES,
      "returns conflict for an unversioned save that changes only the question",
    ),
    mutation: {
      file: STORE,
      find: "const same = current.questionText === pair.questionText && current.answer === pair.answer;",
      replace: "const same = current.answer === pair.answer;",
      why: "compare answers only when settling a refused save",
    },
  },
  {
    check: store(
      STALE_SAVES,
      "throws on an expected version that is not a positive integer, before touching the row",
    ),
    mutation: {
      file: STORE,
      find: "  if (!Number.isSafeInteger(expected) || expected < 1) {\n",
      replace: "  if (false) {\n",
      why: "send any number as the expected version to SQL",
    },
  },
  {
    check: store(
      STALE_SAVES,
      "names the parameter to drop when an update or an auto id finds no entry",
    ),
    mutation: {
      file: STORE,
      find: '"There is no entry to update under this question_id. To create one, resend without expected_version."',
      replace: '"There is no entry to update under this question_id."',
      why: "refuse without saying what to resend",
    },
  },
  {
    check: store(
      "readProfilesForAdmin",
      "gives a manager every member's entries with owner, version and dates",
    ),
    mutation: {
      file: STORE,
      find: "      ownerUserId: row.owner_user_id,\n",
      replace: "      ownerUserId: row.owner_email,\n",
      why: "map the admin projection's owner from the wrong column",
    },
  },
  {
    check: store("readProfilesForAdmin", "answers an ordinary member with ok: false"),
    mutation: {
      file: STORE,
      find: "  if (!rows) return { ok: false };\n",
      replace: "  if (!rows) return { ok: true, entries: [] };\n",
      why: "answer a refused member with an empty list, as if allowed",
    },
  },
  {
    check: rls("refuses an update that hands an own session to another member"),
    mutation: {
      file: PROVISIONING,
      find: '{ table: adminSessions, privileges: "SELECT, INSERT, UPDATE (ended_at)" },',
      replace: '{ table: adminSessions, privileges: "SELECT, INSERT, UPDATE" },',
      why: "grant UPDATE on every column of the sessions table",
    },
  },
  {
    check: provision(
      UPGRADE,
      "still answers an old explicit-column read of the admin function after the upgrade",
    ),
    mutation: {
      file: DEFINERS,
      find: "  owner_email text,\n  question_id text,\n",
      replace: "  owner_email text,\n  profile_question_id text,\n",
      why: "rename a column of the admin function's result",
    },
  },
  {
    check: provision(
      "upgrading from the release before the source system's column names (0005)",
      "renames owner_id and question in place and reads every row back intact",
    ),
    mutation: {
      file: SOURCE_NAMES_MIGRATION,
      find: 'ALTER TABLE "working_profile_answers" RENAME COLUMN "question" TO "question_text";',
      replace: 'ALTER TABLE "working_profile_answers" ADD COLUMN "question_text" text;',
      why: "answer drizzle-kit's prompt with create, not rename: the question text is lost",
    },
  },
  // ---------------------------------------------------------------- protocol revisions
  {
    check: revisions(
      "gives the v1 client, the v2 client pinned to 2026-07-28 and the v2 client in auto mode the same tools, prompts, instructions and receipts",
    ),
    mutation: MODERN_TO_2025,
  },
  {
    check: revisions(
      "answers server/discover with 2026-07-28, the instructions and a private caching hint",
    ),
    mutation: {
      file: SERVER,
      find: '      "server/discover": LIST_CACHE_HINT,\n',
      replace: "",
      why: "give server/discover no lifetime (the SDK's default, ttlMs 0)",
    },
  },
  {
    check: revisions(
      "marks tools/list and prompts/list private with a lifetime on 2026-07-28, and not on 2025",
    ),
    mutation: {
      file: SERVER,
      find: '      "tools/list": LIST_CACHE_HINT,\n',
      replace: "",
      why: "give tools/list no lifetime (the SDK's default, ttlMs 0)",
    },
  },
  {
    check: revisions("lists tools in the same order every time"),
    mutation: {
      file: SERVER,
      find: "    return { tools: capabilities.flatMap((c) => c.tools).map(describeTool) };",
      replace:
        "    return { tools: capabilities.flatMap((c) => c.tools).map(describeTool).sort(() => Math.random() - 0.5) };",
      why: "list tools in a different order on each call",
    },
  },
  {
    check: revisions(
      "refuses an unsupported protocol version with the revision's error naming the supported versions, never a 500",
    ),
    mutation: MODERN_TO_2025,
  },
  {
    check: revisions(
      "refuses a malformed protocol version on a 2025 request with 400 naming the supported versions",
    ),
    mutation: {
      file: "apps/mcp-server/src/protocol-revision.ts",
      find: "  if (header !== null && /^\\d{4}-\\d\\d-\\d\\d$/.test(header) && header >= FIRST_MODERN_REVISION) {",
      replace: "  if (header !== null) {",
      why: "take any version header, even a malformed one, as a 2026-07-28 claim",
    },
  },
  {
    check: revisions(
      "answers initialize, a method 2026-07-28 removed, with 404 and -32601 when it carries the envelope",
    ),
    mutation: {
      file: SERVER,
      find: "        isJSONRPCRequest(message) &&\n        !envelopesModernRevision(message)\n",
      replace: "        isJSONRPCRequest(message)\n",
      why: "check every initialize's params as a 2025 one, enveloped or not",
    },
  },
  {
    check: revisions(
      "refuses an Mcp-Method or Mcp-Name header that disagrees with the body with 400 and -32020",
    ),
    mutation: {
      file: SERVER,
      find: '  return route.kind === "legacy";',
      replace: '  return route.kind !== "modern";',
      why: "send what the SDK refuses to the 2025 transport, which reads no Mcp-* header",
    },
  },
  {
    check: revisions(
      "answers a 2026-07-28 call whose token cannot be checked with NORTH_UNAVAILABLE, as a 2025 one",
    ),
    mutation: {
      file: "apps/mcp-server/src/unavailable.ts",
      find: '      ? { ...refusal, resultType: "complete" }',
      replace: "      ? refusal",
      why: "answer the refusal without the resultType 2026-07-28 requires",
    },
  },
  {
    check: revisions("lets a browser client on an allowed origin send the 2026-07-28 headers"),
    mutation: {
      file: APP,
      find: '      "Mcp-Method",\n',
      replace: "",
      why: "leave Mcp-Method out of the headers CORS allows",
    },
  },
  {
    check: revisions(
      "negotiates 2025-06-18 and 2025-11-25 through initialize and lists the same tools at each",
    ),
    mutation: {
      file: SERVER,
      find: "    jsonSchemaValidator: sharedValidator,\n    cacheHints: {",
      replace:
        '    jsonSchemaValidator: sharedValidator,\n    supportedProtocolVersions: ["2026-07-28", "2025-11-25"],\n    cacheHints: {',
      why: "drop 2025-06-18 from the revisions North negotiates",
    },
  },
  // ---------------------------------------------------------------- conformance (issue 23)
  {
    check: {
      file: "test/conformance.test.ts",
      name: "MCP conformance passes every server scenario of 2026-07-28 that applies to North",
    },
    mutation: {
      file: "apps/mcp-server/src/transport-guard.ts",
      find: "    if (!host || !hosts.has(hostname(host))) {",
      replace: "    if (!host) {",
      why: "any Host header accepted: DNS rebinding gets through on the 2026 path too",
    },
  },
  {
    check: {
      file: "test/conformance.test.ts",
      name: "MCP conformance passes every server scenario of 2025-11-25 that applies to North",
    },
    mutation: {
      file: "apps/mcp-server/src/transport-guard.ts",
      find: "    if (!host || !hosts.has(hostname(host))) {",
      replace: "    if (!host) {",
      why: "any Host header accepted: DNS rebinding gets through",
    },
  },
  {
    check: {
      file: "test/conformance-authorization.test.ts",
      name: "MCP authorization-server conformance passes every authorization-server scenario that applies to North, for a client metadata document",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/protocol.ts",
      find: '  "client_id_metadata_document_supported",',
      replace: "",
      why: "the metadata trimmed of client_id_metadata_document_supported: hosts fall back to DCR",
    },
  },
  {
    check: {
      file: "test/conformance-authorization.test.ts",
      name: "MCP authorization-server conformance passes every authorization-server scenario that applies to North, for a client registered by DCR",
    },
    mutation: {
      file: "apps/mcp-server/src/sign-in/protocol.ts",
      find: '  "issuer",',
      replace: "",
      why: "the metadata trimmed of its issuer: clients cannot check the iss they are sent back",
    },
  },
  ...SIGN_IN_MUTATIONS,
  ...HOST_MUTATIONS,
  ...PIPELINE_MUTATIONS,
  ...rememberedTokens.MUTATIONS,
];

/** Checks no sensible product mutation turns red. Each one points at a weak test. */
export const NO_MUTATION: readonly NoMutation[] = [];
