// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/hosts/attacks.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/hosts/attacks.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "A1-A2: one profile entry within the write limits, worst-case characters A1: north__working_profile stays under the host's 50,000 characters",
    },
    mutation: {
      in: "profilePage",
      find: "  if (page.included.length === 1 && first && cost(first) > Math.max(budget, options.ceiling)) {",
      replace:
        "  if (page.included.length === 0 && first && cost(first) > Math.max(budget, options.ceiling)) {",
      why: "an entry that does not fit even alone is sent whole, past the host's cut",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A1-A2: one profile entry within the write limits, worst-case characters A2: north__briefing stays under the host's 50,000 characters",
    },
    mutation: {
      in: "profilePage",
      find: "  if (page.included.length === 1 && first && cost(first) > Math.max(budget, options.ceiling)) {",
      replace:
        "  if (page.included.length === 0 && first && cost(first) > Math.max(budget, options.ceiling)) {",
      why: "an entry that does not fit even alone is sent whole, past the host's cut",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A1-A2: one profile entry within the write limits, worst-case characters A1b: quotes and backslashes (4 JSON characters each) also stay under the limit",
    },
    mutation: {
      in: "profilePage",
      find: "  if (page.included.length === 1 && first && cost(first) > Math.max(budget, options.ceiling)) {",
      replace:
        "  if (page.included.length === 0 && first && cost(first) > Math.max(budget, options.ceiling)) {",
      why: "an entry that does not fit even alone is sent whole, past the host's cut",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A3-A4: one memory within the write limits does not blind recall or the briefing A3: recall without a query still returns the ordinary memories that fit",
    },
    mutation: {
      file: "packages/agent-runtime/src/memory-fence.ts",
      find: "  const includedIndexes: number[] = [];\n  memories.forEach((memory, index) => {\n",
      replace:
        "  const includedIndexes: number[] = [];\n  let full = false;\n  memories.forEach((memory, index) => {\n    if (full) return;\n",
      why: "the fence stops at the first memory that does not fit, hiding every one after it",
      also: [
        {
          in: "renderMemoryFence",
          find: "    if (used + cost > options.tokenBudget) return;",
          replace:
            "    if (used + cost > options.tokenBudget) {\n      full = true;\n      return;\n    }",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE,
      name: "A3-A4: one memory within the write limits does not blind recall or the briefing A3b: the briefing still shows the workspace's ordinary memories",
    },
    mutation: {
      file: "packages/agent-runtime/src/memory-fence.ts",
      find: "  const includedIndexes: number[] = [];\n  memories.forEach((memory, index) => {\n",
      replace:
        "  const includedIndexes: number[] = [];\n  let full = false;\n  memories.forEach((memory, index) => {\n    if (full) return;\n",
      why: "the fence stops at the first memory that does not fit, hiding every one after it",
      also: [
        {
          in: "renderMemoryFence",
          find: "    if (used + cost > options.tokenBudget) return;",
          replace:
            "    if (used + cost > options.tokenBudget) {\n      full = true;\n      return;\n    }",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE,
      name: "A3-A4: one memory within the write limits does not blind recall or the briefing A4: a memory saved within the write limits can be recalled by its own subject",
    },
    mutation: {
      in: "renderMemoryFence",
      find: "  if (lines.length === 0 && first) {",
      replace: "  if (lines.length < 0 && first) {",
      why: "a memory too long for any budget is never recalled",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A5: held's cursor is bound to its subject a cursor from Alice's listing, sent with Bruno, is refused or lists all of Bruno",
    },
    mutation: {
      in: "listing",
      find: '    const listing = `${HELD_TOOL}:${subjectFingerprint}:${subject.value.type ?? "*"}`;',
      replace: "    const listing = HELD_TOOL;",
      why: "held's cursors are not bound to their subject, so one silently skips another's rows",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A6: token budget of a page of text that is one token or more a character a profile page of combining marks stays under 25,000 tokens (>= 1 token per mark)",
    },
    mutation: {
      in: "jsonStringCost",
      find: "    else cost += 2;",
      replace: "    else cost += 1;",
      why: "the budget counts characters only, so text of a token a character passes the token cut",
      // A page's text is costed by the string count, other values by the general one: both.
      also: [
        {
          in: "jsonCost",
          find: "  return json.length + nonAscii + 1;",
          replace: "  return json.length + 1;",
        },
      ],
    },
  },
  {
    check: {
      file: SUITE,
      name: "attacks that should hold crafted cursors never 500, never read another member or organisation",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/paging.ts",
      find: "  const decoded = decodeCursor(cursor, listing);\n",
      replace:
        "  const decoded = decodeCursor(cursor, listing);\n  if (!decoded.ok) throw new Error(decoded.code);\n",
      why: "a cursor North did not write throws instead of answering with a receipt",
    },
  },
  {
    check: {
      file: SUITE,
      name: "attacks that should hold an oldest-possible cursor reads one page of the caller's own rows only",
    },
    mutation: {
      in: "decodeCursor",
      find: "  if (tag !== tagOf(listing) || !/",
      replace: "  if (!/",
      why: "a cursor's listing tag is not checked",
    },
  },
  {
    check: {
      file: SUITE,
      name: "attacks that should hold the pages together are every entry once; the cursor carries nothing but base64url",
    },
    mutation: {
      file: "packages/agent-runtime/src/result-budget.ts",
      in: "after",
      find: "keyed.filter(({ key }) => compare(key, cursor) > 0);",
      replace: "keyed.filter(({ key }) => compare(key, cursor) >= 0);",
      why: "a page starts at the cursor's row instead of after it, repeating it",
    },
  },
  {
    check: {
      file: SUITE,
      name: "attacks that should hold an injected answer or body stays on one line inside its fence, block first",
    },
    mutation: {
      in: "FENCE_ESCAPED",
      find: "  /[<>\\u2028",
      replace: "  /[>\\u2028",
      why: "the fence leaves `<` as it is, so a body can close the fence",
    },
  },
  {
    check: {
      file: SUITE,
      name: "attacks that should hold no body and no cursor reaches the audit rows or the logs",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/read.ts",
      in: "rows",
      find: "    const rows = await ctx.last(READ_AUDIT, () =>",
      replace: "    const rows = await ctx.last({ ...READ_AUDIT, reason: input.cursor }, () =>",
      why: "the profile read audits the cursor it was sent",
    },
  },
  {
    check: {
      file: SUITE,
      name: "worst-case memories stay within the host's limit (should hold) held and recall with bodies and subject ids of `<`, quotes and backslashes",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/held.ts",
      find: "      RESULT_CHAR_BUDGET,\n    );",
      replace: "      Number.MAX_SAFE_INTEGER,\n    );",
      why: "subject access in one unbounded result",
    },
  },
  {
    check: {
      file: SUITE,
      name: "keyset ties: same creation time, same millisecond, ids of every allowed character pages through entries with tied or microsecond-apart times, every entry once",
    },
    mutation: {
      in: "positionOf",
      find: "  return `${createdAt.toISOString()}~${id}`;",
      replace: "  return `${createdAt.toISOString()}~x`;",
      why: "a position without the row's id, so rows created in the same millisecond are skipped",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A7: text that looks like a fence to a model a fullwidth closing tag is not left standing in the block",
    },
    mutation: {
      in: "FENCE_ESCAPED",
      find: "\\uFF1C\\uFF1E\\uFE64\\uFE65\\u2039\\u203A\\u3008\\u3009\\u27E8\\u27E9\\u2329\\u232A]",
      replace: "]",
      why: "look-alike brackets left as they are in the fence",
    },
  },
  {
    check: {
      file: SUITE,
      name: "A7: text that looks like a fence to a model invisible Unicode tag characters (ASCII smuggling) do not reach the block",
    },
    mutation: {
      in: "dropUnsafe",
      find: '    .replace(TAG_CHARACTER, "");',
      replace: ";",
      why: "the sanitizer keeps invisible tag characters",
    },
  },
];

export const SUITES = [SUITE];
