// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
import type { Entry } from "../../../scripts/acceptance-mutations.ts";

const DELIVERY = "test/hosts/claude-code-delivery.test.ts";

const SERVER = "apps/mcp-server/src/server.ts";
const MANIFEST = "apps/mcp-server/src/manifest.ts";
const TOOL_RUNNER = "apps/mcp-server/src/tool-runner.ts";
const FENCE = "packages/agent-runtime/src/memory-fence.ts";

const DELIVERS = "what Claude Code delivers to the model from North";
const FENCED = "each result with lawyer-written text reaches the model fenced and labelled first";
const LARGE = "a large profile (15 answers of 9,500 characters) stays within Claude Code's limits";
const ONBOARD = "the onboard prompt expands in `claude -p`";

/** The structured result with its keys in reverse order: the data before the fence. */
const DATA_BEFORE_FENCE: Entry["mutation"] = {
  file: TOOL_RUNNER,
  why: "the structured result is sent with its data before its fence (keys in another order)",
  find: "        : { structuredContent: outcome.structured as Record<string, unknown> }),",
  replace:
    "        : { structuredContent: Object.fromEntries(Object.entries(outcome.structured as Record<string, unknown>).reverse()) }),",
};

const BUDGET = "packages/agent-runtime/src/result-budget.ts";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [DELIVERY];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: DELIVERY,
      name: `${DELIVERS} gives the model North's server instructions whole, under 2,000 characters`,
    },
    mutation: {
      file: SERVER,
      why: "the instructions grow past the 2,048 characters Claude Code keeps",
      find: "    instructions: instructionsFor(all, capabilities),\n    jsonSchemaValidator: sharedValidator,",
      replace:
        '    instructions: `${instructionsFor(all, capabilities)}\\n\\n${"More guidance. ".repeat(140)}`,\n    jsonSchemaValidator: sharedValidator,',
    },
  },
  {
    check: {
      file: DELIVERY,
      name: `${DELIVERS} offers every North tool with a name and input schema the Messages API accepts`,
    },
    mutation: {
      file: MANIFEST,
      why: "tools are published under a dotted name, which MCP allows and the Messages API does not",
      find: "    name: tool.name,",
      replace: "    name: `${tool.name}.v1`,",
    },
  },
  {
    check: {
      file: DELIVERY,
      name: `${DELIVERS} gives the model each tool's description whole, as North wrote it`,
    },
    mutation: {
      file: MANIFEST,
      why: "descriptions grow past the 2,048 characters Claude Code keeps",
      find: "    description: tool.description,",
      replace: '    description: `${tool.description}\\n\\n${"More guidance. ".repeat(140)}`,',
    },
  },
  {
    check: { file: DELIVERY, name: `${FENCED} north__working_profile` },
    mutation: DATA_BEFORE_FENCE,
  },
  {
    check: { file: DELIVERY, name: `${FENCED} north__memory_held` },
    mutation: DATA_BEFORE_FENCE,
  },
  {
    check: { file: DELIVERY, name: `${FENCED} north__briefing` },
    mutation: {
      file: FENCE,
      why: "the profile's fence loses its tag, so nothing marks where the lawyer's text starts",
      find: '    "<north-profile>",',
      replace: '    "<profile>",',
    },
  },
  {
    check: { file: DELIVERY, name: `${FENCED} north__memory_recall` },
    mutation: {
      file: FENCE,
      why: "the memories' fence loses its tag",
      find: '  const open = `<north-memories mode="${options.mode}">`;',
      replace: '  const open = `<memories mode="${options.mode}">`;',
    },
  },
  {
    check: {
      file: DELIVERY,
      name: `${LARGE} the briefing reaches the model whole, once each, and says to read the rest with north__working_profile`,
    },
    mutation: {
      file: BUDGET,
      find: "export const BRIEFING_PROFILE_CHAR_BUDGET = 16_000;",
      replace: "export const BRIEFING_PROFILE_CHAR_BUDGET = 160_000;",
      why: "the briefing's profile budgeted above what Claude Code passes on",
    },
  },
  {
    check: {
      file: DELIVERY,
      name: `${LARGE} north__working_profile reaches the model whole and names the cursor that reads the rest`,
    },
    mutation: {
      file: BUDGET,
      find: "export const RESULT_CHAR_BUDGET = 32_000;",
      replace: "export const RESULT_CHAR_BUDGET = 320_000;",
      why: "a page budget above what Claude Code passes on",
    },
  },
  {
    check: {
      file: DELIVERY,
      name: `${ONBOARD} as /mcp__north__onboard, into North's onboarding prompt`,
    },
    mutation: {
      file: SERVER,
      why: "the prompt's text is cut when it is rendered",
      find: '        content: { type: "text" as const, text: m.text },',
      replace: '        content: { type: "text" as const, text: m.text.slice(0, 120) },',
    },
  },
  {
    check: {
      file: DELIVERY,
      name: `${ONBOARD} with its locale argument, /mcp__north__onboard fr, into the French prompt`,
    },
    mutation: {
      file: SERVER,
      why: "the prompt is rendered without its arguments, so the locale is dropped",
      find: "      messages: prompt.render(parsed.data).map((m) => ({",
      replace: "      messages: prompt.render({}).map((m) => ({",
    },
  },
];
