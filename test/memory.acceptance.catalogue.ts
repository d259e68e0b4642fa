// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of memory.acceptance.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/memory.acceptance.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "20. the memory store refuses an observation, or a fact about a person, without a full subject",
    },
    mutation: {
      in: "checkSubject",
      find: 'return kind === "observation" ? required : { ok: true, value: null };',
      replace: "return { ok: true, value: null };",
      why: "an observation without a subject is stored without one",
    },
  },
  {
    check: { file: SUITE, name: "20. the memory store states which recall mode ran" },
    mutation: {
      in: "recallFenced",
      find: "const embedded = query && embedder ? await embedText(embedder, query) : undefined;",
      replace: "const embedded = undefined;",
      why: "never embed the query: with an embedder, recall silently runs full-text",
    },
  },
  {
    check: {
      file: SUITE,
      name: "20. the memory store lists everything held about a subject with provenance, and forgets it leaving tombstones",
    },
    mutation: {
      file: "packages/agent-runtime/src/memory-rules.ts",
      find: "    .toUpperCase()\n    .toLowerCase()\n",
      replace: "",
      why: "the subject key is case-sensitive: 'ACME SAS' finds nothing held about 'Acme SAS'",
    },
  },
  {
    check: {
      file: SUITE,
      name: "20. the memory store never recalls an expired memory, lists it as expired until purged, and purges its body",
    },
    mutation: {
      in: "LIVE_MEMORY",
      find: "or(gt(memories.expiresAt, sql`now()`), IN_HELD_MATTER) as SQL,",
      replace: "sql`true`,",
      why: "recall without `expires_at > now()`",
    },
  },
  {
    check: {
      file: SUITE,
      name: "20. the memory store fences recalled memories with origin, date and the pinned sentence",
    },
    mutation: {
      file: "packages/agent-runtime/src/memory-fence.ts",
      find: "  MEMORY_NOT_A_REASON,\n",
      replace: "",
      why: "leave the pinned sentence out of the fence preamble",
    },
  },
  {
    check: {
      file: SUITE,
      name: "isolation shares memories with every member of the organization and no other organization",
    },
    mutation: {
      // 0022 redefined the policy 0004 created: the migration that has the last word.
      file: "drizzle/0022_matters.sql",
      find: "ALTER POLICY \"memories_tenant_select\" ON \"memories\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and",
      replace:
        "ALTER POLICY \"memories_tenant_select\" ON \"memories\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and author_id = nullif(current_setting('north.user_id', true), '')::uuid and",
      why: "memories copied the profile's owner-only select policy: colleagues see nothing",
    },
  },
  {
    check: { file: SUITE, name: "isolation lets only the author or a manager forget a memory" },
    mutation: {
      in: "forgetMemories",
      find: "isManager ? sql`true` : eq(memories.authorId, requester.userId)",
      replace: "sql`true`",
      why: "any member may forget anyone's memory",
    },
  },
  {
    check: {
      file: SUITE,
      name: "erasure removes a forgotten body from the database for every role, dump included",
    },
    mutation: {
      find: "      body: null,\n      subjectId: null,\n",
      replace: "      body: null,\n",
      why: "forgetting keeps the subject's name in the tombstone",
    },
  },
  {
    check: { file: SUITE, name: "recall finds a French memory by a French word" },
    mutation: {
      file: "packages/db/src/memories/definers.ts",
      find: "v_every := public.north_search_query(v_language, p_query, true, v_prefix);",
      replace: "v_every := pg_catalog.websearch_to_tsquery('simple'::regconfig, p_query);",
      also: [
        {
          file: "packages/db/src/memories/definers.ts",
          find: "v_some := public.north_search_query(v_language, p_query, false, v_prefix);",
          replace:
            "v_some := pg_catalog.websearch_to_tsquery('simple'::regconfig, replace(p_query, ' ', ' or '));",
        },
      ],
      why: "full-text queries read word for word ('simple') against the stemmed, accent-folded index",
    },
  },
  {
    check: {
      file: SUITE,
      name: "recall returns newest first without a query, and respects the limit",
    },
    mutation: {
      in: "recallMemories",
      find: ".orderBy(desc(memories.createdAt)) .limit(params.limit);",
      replace: ".orderBy(memories.createdAt)\n      .limit(params.limit);",
      why: "recency recall sorted oldest first",
    },
  },
  {
    check: { file: SUITE, name: "recall keeps the fenced block within the token budget" },
    mutation: {
      file: "packages/agent-runtime/src/memory-fence.ts",
      find: "    if (used + cost > options.tokenBudget) return;\n",
      replace: "",
      why: "render every recalled memory whatever the token budget",
    },
  },
  {
    check: {
      file: SUITE,
      name: "injection returns an instruction-like memory only inside the fenced block, labelled with its origin",
    },
    mutation: {
      in: "fenceLine",
      find: ": ${quoted(memory.body)}`;",
      replace: ': "${memory.body}"`;',
      why: "quote the body by hand instead of JSON-escaping it: a newline forges a line, a tag closes the fence",
    },
  },
  {
    check: {
      file: SUITE,
      name: "briefing returns the caller's working profile and recent memories, fenced",
    },
    mutation: {
      in: "createBriefingTool",
      find: 'const rows = ctx.principal.scopes.includes("profile:write")',
      replace: 'const rows = !ctx.principal.scopes.includes("profile:write")',
      why: "inverted scope check: the briefing leaves out the profile of those who have one",
    },
  },
  {
    check: {
      file: SUITE,
      name: "20. the memory store refuses expires_in_days outside 1–365 at the schema, storing nothing",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/remember.ts",
      find: "    .min(1)\n    .max(MAX_MEMORY_EXPIRY_DAYS)\n",
      replace: "",
      why: "publish expires_in_days without its bounds (only the handler checks them)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "20. the memory store answers a lookup tool's argument error without claiming anything about saving",
    },
    mutation: {
      in: "checkSubjectLookup",
      find: '"Send subject_id (and subject_type to narrow it to one kind of subject)."',
      replace: '"Send subject_id. Nothing was saved."',
      why: "reuse the write-time refusal on a lookup",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools refuses a blank body, an expiry out of range and a malformed conversation id, storing nothing",
    },
    mutation: {
      find: "  const days = checkExpiryDays(params.expiresInDays);\n  if (!days.ok) return reject(days);\n",
      replace: "  const days = { value: params.expiresInDays ?? 90 };\n",
      why: "trust the tool's schema and stop checking the expiry in the store",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools stores a subject and recalls by its fingerprint only the memories about it",
    },
    mutation: {
      find: "    live.push(eq(memories.subjectFingerprint, params.subjectFingerprint));\n",
      replace: "",
      why: "ignore the subject when recalling",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools treats a blank query as no query and recalls by recency",
    },
    mutation: {
      find: "  const query = params.query?.trim();\n",
      replace: "  const query = params.query;\n",
      why: "search for a blank query instead of recalling by recency",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools answers forgetting an already forgotten memory with noop",
    },
    mutation: {
      in: "forgetMemories",
      find: 'if (existing.forgottenAt || existing.purgedAt) { return { outcome: "noop", forgotten: 0, remaining: 0, heldBack: 0 }; }',
      replace: "",
      why: "refuse a repeated erasure as forbidden instead of a noop",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools explains a refusal to forget an unknown id or another member's memory",
    },
    mutation: {
      find: '      message: "No memory has this id in this workspace.",\n',
      replace: '      message: "",\n',
      why: "refuse without saying why",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools re-keys only the fingerprints that changed, keeps tombstones' and counts both",
    },
    mutation: {
      find: "      return next === row.subjectFingerprint ? [] : [{ id: row.id, next }];\n",
      replace: "      return [{ id: row.id, next }];\n",
      why: "rewrite every fingerprint, changed or not, and report them all as re-keyed",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the store on its own, below the tools reclaims space with VACUUM, and with VACUUM FULL when asked, reporting what ran",
    },
    mutation: {
      find: '  if (!owner?.may) skipped.push(options.full ? "vacuum full" : "vacuum");\n',
      replace: "",
      why: "say nothing when the connection may not vacuum (PostgreSQL only warns)",
    },
  },
];
