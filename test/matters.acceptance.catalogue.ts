// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of matters.acceptance.test.ts (SPEC §5a through the tools).
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/matters.acceptance.test.ts";
const TOOLS = "matters through the tools (SPEC §5a)";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: `${TOOLS} stores a matter's memory for its team, and it comes back only with the matter named`,
    },
    mutation: {
      in: "fenceLine",
      find: 'const matter = memory.matter ? `, matter ${quoted(memory.matter)}` : "";',
      replace: 'const matter = "";',
      why: "the fence leaves out each line's matter",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${TOOLS} refuses a restricted matter, a screened one and one that does not exist with the same receipt`,
    },
    mutation: {
      in: "visibleMatter",
      find: "sql`${matters.id} = ANY ((SELECT public.north_visible_matters())::uuid[])`,",
      replace: "undefined,",
      why: "a named matter is resolved without the may-see rule",
    },
  },
  {
    check: { file: SUITE, name: `${TOOLS} stores nothing in a matter the caller may not see` },
    mutation: {
      file: "apps/mcp-server/src/capabilities/memory/remember.ts",
      find: "if (!resolved.ok) {",
      replace: "if (false as boolean) {",
      why: "remember stores firm-wide when the named matter is refused",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${TOOLS} held lists each memory's matter and counts what sits in matters the caller may not see`,
    },
    mutation: {
      in: "heldOf",
      find: "matter: m.matterId ? (matters.get(m.matterId) ?? null) : null,",
      replace: "matter: null,",
      why: "held lists every memory as firm-wide",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${TOOLS} forget erases only what the caller may see, even a manager's erasure across the firm`,
    },
    mutation: {
      file: "drizzle/0021_matter_visibility.sql",
      find: "SELECT 1 FROM public.matter_screens s WHERE s.matter_id = mt.id AND s.user_id = v_user_id)",
      replace: "SELECT 1 FROM public.matter_screens s WHERE s.matter_id = mt.id AND false)",
      why: "the may-see rule ignores screens: a screened manager erases the matter's memories",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${TOOLS} keeps a held matter's memory through forget, and says so`,
    },
    mutation: {
      in: "forgetMemories",
      find: ".where(and(inOrganization, match, ...HOLDS_BODY, mayForget, not(IN_HELD_MATTER)))",
      replace: ".where(and(inOrganization, match, ...HOLDS_BODY, mayForget))",
      why: "forget erases the memories of a matter under legal hold",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${TOOLS} lists a held matter's memory past its expiry as live, in held and in the console's review`,
    },
    mutation: {
      in: "MEMORY_STATE",
      find: "when ${memories.expiresAt} <= now() and not ${IN_HELD_MATTER} then 'expired'",
      replace: "when ${memories.expiresAt} <= now() then 'expired'",
      why: "a held matter's memory is called expired once its date passes, though it is still recalled",
    },
  },
];

export const SUITES = [SUITE];
