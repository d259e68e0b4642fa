import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const WORDS = "test/hosts/words.test.ts";
const BOUNDED = "test/hosts/bounded-results.test.ts";

const CAPABILITIES = "apps/mcp-server/src/capabilities/index.ts";
const MEMORY = "apps/mcp-server/src/capabilities/memory/index.ts";
const SAVE = "apps/mcp-server/src/capabilities/working-profile/save.ts";
const FORGET = "apps/mcp-server/src/capabilities/memory/forget.ts";
const HELD = "apps/mcp-server/src/capabilities/memory/held.ts";
const RECALL = "apps/mcp-server/src/capabilities/memory/recall.ts";
const BUDGET = "packages/agent-runtime/src/result-budget.ts";

const INSTRUCTIONS = "the server instructions as the hosts cut them";
const DESCRIPTIONS = "each tool's description as the hosts cut it";
const PROFILE = "a large working profile (15 answers of 9,500 characters)";
const SUBJECT = "a subject with a large file (60 memories of 2,000 characters)";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [WORDS, BOUNDED];

export const MUTATIONS: readonly Entry[] = [
  // Issue 22, point 2: the words' limits and the rules each tool carries.
  {
    check: {
      file: WORDS,
      name: `${INSTRUCTIONS} stay under 2,000 characters and open with the safety rules for scopes 'profile+read+write+admin'`,
    },
    mutation: {
      file: CAPABILITIES,
      find: "    ...SAFETY_RULES,\n    PREAMBLE,\n",
      replace: "    PREAMBLE,\n    ...SAFETY_RULES,\n",
      why: "a preamble before the safety rules",
    },
  },
  {
    check: {
      file: WORDS,
      name: `${INSTRUCTIONS} put the data boundary, honesty and special categories before any tool is named`,
    },
    mutation: {
      file: CAPABILITIES,
      find: "    ...SAFETY_RULES,\n    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n",
      replace:
        "    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n    ...SAFETY_RULES,\n",
      why: "the safety rules after the capabilities' guidance, where Claude Code's cut drops them",
    },
  },
  {
    check: {
      file: WORDS,
      name: `${DESCRIPTIONS} 'north__working_profile_answer' stays within 2,048 characters`,
    },
    mutation: {
      file: SAVE,
      find: '    "If the lawyer skips, stops or postpones, save nothing and do not ask again in this conversation.",\n  ].join(" "),',
      replace:
        '    "If the lawyer skips, stops or postpones, save nothing and do not ask again in this conversation.",\n  ].join(" ").repeat(2),',
      why: "a description grown past Claude Code's cut",
    },
  },
  {
    check: {
      file: WORDS,
      name: `${DESCRIPTIONS} 'north__memory_forget' carries the rules that govern it`,
    },
    mutation: {
      file: FORGET,
      find: " Confirm with the lawyer before calling: say what will be erased, and wait for their yes.",
      replace: "",
      why: "the confirmation rule only in the instructions, which claude.ai drops",
    },
  },
  {
    check: { file: WORDS, name: `${DESCRIPTIONS} every tool has its rules listed here` },
    mutation: {
      file: MEMORY,
      find: "tools: [createBriefingTool(deps), createRecallTool(deps), heldTool],",
      replace: "tools: [createBriefingTool(deps), createRecallTool(deps)],",
      why: "a tool set that no longer matches the rules checked (here: held dropped)",
    },
  },
  // Issue 22, points 3 and 4: fences in structuredContent and bounded results.
  {
    check: {
      file: BOUNDED,
      name: `${PROFILE} reads in pages within the host's limit, each fenced first, together every entry once`,
    },
    mutation: {
      file: BUDGET,
      find: "export const RESULT_CHAR_BUDGET = 32_000;",
      replace: "export const RESULT_CHAR_BUDGET = 480_000;",
      why: "a page budget above what Claude Code passes on",
    },
  },
  {
    check: {
      file: BOUNDED,
      name: `${PROFILE} refuses a cursor North did not write, saying how to recover`,
    },
    mutation: {
      file: BUDGET,
      find: "  if (tag !== tagOf(listing) || !/^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z~[^~|]+$/.test(position)) {",
      replace: "  if (position === undefined) {",
      why: "any cursor read as a position, whatever its listing",
    },
  },
  {
    check: {
      file: BOUNDED,
      name: `${PROFILE} is budgeted in the briefing: each body once, fenced, with what was left out and how to read it`,
    },
    mutation: {
      file: BUDGET,
      find: "export const BRIEFING_PROFILE_CHAR_BUDGET = 16_000;",
      replace: "export const BRIEFING_PROFILE_CHAR_BUDGET = 240_000;",
      why: "the briefing carries the whole profile, unbudgeted",
    },
  },
  {
    check: {
      file: BOUNDED,
      name: `${SUBJECT} is listed by held in pages within the host's limit, fenced first, every memory once`,
    },
    mutation: {
      file: HELD,
      find: "      RESULT_CHAR_BUDGET,\n    );",
      replace: "      Number.MAX_SAFE_INTEGER,\n    );",
      why: "subject access in one unbounded result",
    },
  },
  {
    check: {
      file: BOUNDED,
      name: `${SUBJECT} keeps recall within its token budget and says how many it left out`,
    },
    mutation: {
      file: RECALL,
      find: "    ...(leftOut > 0 ? { left_out: leftOut } : {}),",
      replace: "",
      why: "recall cuts by its budget without saying how many it left out",
    },
  },
];
