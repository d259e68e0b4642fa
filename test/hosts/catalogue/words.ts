// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/hosts/words.test.ts, test/hosts/bounded-results.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/hosts/words.test.ts";
const SUITE_2 = "test/hosts/bounded-results.test.ts";

export const SUITES = [SUITE_1, SUITE_2];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "the server instructions as the hosts cut them stay under 2,000 characters and open with the safety rules for scopes 'profile+read+write+admin'",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/index.ts",
      find: "    ...SAFETY_RULES,\n    PREAMBLE,\n",
      replace: "    PREAMBLE,\n    ...SAFETY_RULES,\n",
      why: "a preamble before the safety rules",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the server instructions as the hosts cut them put the data boundary, honesty and special categories before any tool is named",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/index.ts",
      find: "    ...SAFETY_RULES,\n    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n",
      replace:
        "    PREAMBLE,\n    ...capabilities.flatMap((c) => c.guidance),\n    ...SAFETY_RULES,\n",
      why: "the safety rules after the capabilities' guidance, where Claude Code's cut drops them",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "each tool's description as the hosts cut it 'north__working_profile_answer' stays within 2,048 characters",
    },
    mutation: {
      file: "apps/mcp-server/src/capabilities/working-profile/save.ts",
      find: '    "If the lawyer skips, stops or postpones, save nothing and do not ask again in this conversation.",\n  ].join(" "),',
      replace:
        '    "If the lawyer skips, stops or postpones, save nothing and do not ask again in this conversation.",\n  ].join(" ").repeat(2),',
      why: "a description grown past Claude Code's cut",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "each tool's description as the hosts cut it 'north__memory_forget' carries the rules that govern it",
    },
    mutation: {
      in: "forgetTool",
      find: " Confirm with the lawyer before calling: say what will be erased, and wait for their yes.",
      replace: "",
      why: "the confirmation rule only in the instructions, which claude.ai drops",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "each tool's description as the hosts cut it every tool has its rules listed here",
    },
    mutation: {
      in: "createMemoryReadCapability",
      find: "tools: [createBriefingTool(deps), createRecallTool(deps), heldTool],",
      replace: "tools: [createBriefingTool(deps), createRecallTool(deps)],",
      why: "a tool set that no longer matches the rules checked (here: held dropped)",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a large working profile (15 answers of 9,500 characters) reads in pages within the host's limit, each fenced first, together every entry once",
    },
    mutation: {
      in: "RESULT_CHAR_BUDGET",
      find: "export const RESULT_CHAR_BUDGET = 32_000;",
      replace: "export const RESULT_CHAR_BUDGET = 480_000;",
      why: "a page budget above what Claude Code passes on",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a large working profile (15 answers of 9,500 characters) refuses a cursor North did not write, saying how to recover",
    },
    mutation: {
      in: "decodeCursor",
      find: "  if (tag !== tagOf(listing) || !/^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z~[^~|]+$/.test(position)) {",
      replace: "  if (position === undefined) {",
      why: "any cursor read as a position, whatever its listing",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a large working profile (15 answers of 9,500 characters) is budgeted in the briefing: each body once, fenced, with what was left out and how to read it",
    },
    mutation: {
      in: "BRIEFING_PROFILE_CHAR_BUDGET",
      find: "export const BRIEFING_PROFILE_CHAR_BUDGET = 16_000;",
      replace: "export const BRIEFING_PROFILE_CHAR_BUDGET = 240_000;",
      why: "the briefing carries the whole profile, unbudgeted",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "a subject with a large file (60 memories of 2,000 characters) is listed by held in pages within the host's limit, fenced first, every memory once",
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
      file: SUITE_2,
      name: "a subject with a large file (60 memories of 2,000 characters) keeps recall within its token budget and says how many it left out",
    },
    mutation: {
      in: "recallFenced",
      find: "    ...(leftOut > 0 ? { left_out: leftOut } : {}),",
      replace: "",
      why: "recall cuts by its budget without saying how many it left out",
    },
  },
];
