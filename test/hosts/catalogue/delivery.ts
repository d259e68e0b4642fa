// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/** The acceptance-mutation catalogue of test/hosts/claude-code-delivery.test.ts. */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/hosts/claude-code-delivery.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "what Claude Code delivers to the model from North gives the model North's server instructions whole, under 2,000 characters",
    },
    mutation: {
      file: "apps/mcp-server/src/server.ts",
      find: "    instructions: instructionsFor(all, capabilities),\n    jsonSchemaValidator: sharedValidator,",
      replace:
        '    instructions: `${instructionsFor(all, capabilities)}\\n\\n${"More guidance. ".repeat(140)}`,\n    jsonSchemaValidator: sharedValidator,',
      why: "the instructions grow past the 2,048 characters Claude Code keeps",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what Claude Code delivers to the model from North offers every North tool with a name and input schema the Messages API accepts",
    },
    mutation: {
      in: "published",
      find: "    name: tool.name,",
      replace: "    name: `${tool.name}.v1`,",
      why: "tools are published under a dotted name, which MCP allows and the Messages API does not",
    },
  },
  {
    check: {
      file: SUITE,
      name: "what Claude Code delivers to the model from North gives the model each tool's description whole, as North wrote it",
    },
    mutation: {
      in: "published",
      find: "    description: tool.description,",
      replace: '    description: `${tool.description}\\n\\n${"More guidance. ".repeat(140)}`,',
      why: "descriptions grow past the 2,048 characters Claude Code keeps",
    },
  },
  {
    check: {
      file: SUITE,
      name: "each result with lawyer-written text reaches the model fenced and labelled first north__working_profile",
    },
    mutation: {
      in: "toolResult",
      find: ": { structuredContent: outcome.structured as Record<string, unknown> }),",
      replace:
        ": { structuredContent: Object.fromEntries(Object.entries(outcome.structured as Record<string, unknown>).reverse()) }),",
      why: "the structured result is sent with its data before its fence (keys in another order)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "each result with lawyer-written text reaches the model fenced and labelled first north__memory_held",
    },
    mutation: {
      in: "toolResult",
      find: ": { structuredContent: outcome.structured as Record<string, unknown> }),",
      replace:
        ": { structuredContent: Object.fromEntries(Object.entries(outcome.structured as Record<string, unknown>).reverse()) }),",
      why: "the structured result is sent with its data before its fence (keys in another order)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "each result with lawyer-written text reaches the model fenced and labelled first north__briefing",
    },
    mutation: {
      in: "renderProfileFence",
      find: '    "<north-profile>",',
      replace: '    "<profile>",',
      why: "the profile's fence loses its tag, so nothing marks where the lawyer's text starts",
    },
  },
  {
    check: {
      file: SUITE,
      name: "each result with lawyer-written text reaches the model fenced and labelled first north__memory_recall",
    },
    mutation: {
      file: "packages/agent-runtime/src/memory-fence.ts",
      in: "open",
      find: '  const open = `<north-memories mode="${options.mode}">`;',
      replace: '  const open = `<memories mode="${options.mode}">`;',
      why: "the memories' fence loses its tag",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a large profile (15 answers of 9,500 characters) stays within Claude Code's limits the briefing reaches the model whole, once each, and says to read the rest with north__working_profile",
    },
    mutation: {
      in: "BRIEFING_PROFILE_CHAR_BUDGET",
      find: "export const BRIEFING_PROFILE_CHAR_BUDGET = 16_000;",
      replace: "export const BRIEFING_PROFILE_CHAR_BUDGET = 160_000;",
      why: "the briefing's profile budgeted above what Claude Code passes on",
    },
  },
  {
    check: {
      file: SUITE,
      name: "a large profile (15 answers of 9,500 characters) stays within Claude Code's limits north__working_profile reaches the model whole and names the cursor that reads the rest",
    },
    mutation: {
      in: "RESULT_CHAR_BUDGET",
      find: "export const RESULT_CHAR_BUDGET = 32_000;",
      replace: "export const RESULT_CHAR_BUDGET = 320_000;",
      why: "a page budget above what Claude Code passes on",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the onboard prompt expands in `claude -p` as /mcp__north__onboard, into North's onboarding prompt",
    },
    mutation: {
      in: "createMcpServer",
      find: '        content: { type: "text" as const, text: m.text },',
      replace: '        content: { type: "text" as const, text: m.text.slice(0, 120) },',
      why: "the prompt's text is cut when it is rendered",
    },
  },
  {
    check: {
      file: SUITE,
      name: "the onboard prompt expands in `claude -p` with its locale argument, /mcp__north__onboard fr, into the French prompt",
    },
    mutation: {
      in: "createMcpServer",
      find: "      messages: prompt.render(parsed.data).map((m) => ({",
      replace: "      messages: prompt.render({}).map((m) => ({",
      why: "the prompt is rendered without its arguments, so the locale is dropped",
    },
  },
];

export const SUITES = [SUITE];
