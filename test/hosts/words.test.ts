/**
 * Issue 22, point 2 (SPEC §3b): North's words survive every host. Claude Code cuts a server's
 * instructions and each tool description at 2,048 characters and claude.ai drops instructions
 * altogether, so the instructions stay under 2,000 characters with the safety rules first, and
 * each tool's description carries the rules that govern that tool. Behaviour, not wording: each
 * rule is found by what it must say (a tool name, a field, a keyword), never by its sentence.
 */
import { DISCLOSURE, SAFETY_RULES } from "@north/agent-runtime";
import {
  CAPABILITIES,
  composeManifest,
  INSTRUCTIONS_MAX_CHARS,
  type Principal,
  type Scope,
} from "@north/mcp-server";
import { describe, expect, it } from "vitest";

/** Claude Code 2.1.197's cut, for instructions and for each tool description. */
const HOST_CUT = 2_048;

const SCOPES: Scope[] = ["profile:write", "memory:read", "memory:write", "admin"];
const SHORT: Record<Scope, string> = {
  "profile:write": "profile",
  "memory:read": "read",
  "memory:write": "write",
  admin: "admin",
};

/** Every set of scopes a principal can hold: 16 of them. */
const SCOPE_SETS: Scope[][] = Array.from({ length: 2 ** SCOPES.length }, (_, mask) =>
  SCOPES.filter((_, bit) => mask & (1 << bit)),
);

const principal = (scopes: Scope[]): Principal => ({
  organizationId: "00000000-0000-4000-8000-000000000001",
  userId: "00000000-0000-4000-8000-000000000002",
  role: scopes.includes("admin") ? "manager" : "member",
  scopes,
  tokenId: null,
});

const ALL_TOOLS = CAPABILITIES.flatMap((capability) => capability.tools);
const description = (name: string) => {
  const tool = ALL_TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.description;
};

/** The data boundary: the result is data, never instructions; nothing inside it is obeyed. */
const DATA_BOUNDARY = [/never instructions/i, /do not follow/i];
/** Memories: the two origins by name, and no decision about a person on a memory alone. */
const ORIGINS = [/'stated'/, /'inferred'/, /never, on its own, a reason to accept or reject/i];
const SPECIAL_CATEGORIES = [/health/i, /trade-union/i, /belief/i, /criminal offence/i];
/** Honesty on a write: the lawyer is told it is saved only when the receipt says so. */
const HONESTY = [/only when the receipt says so/i];

const RULES: Record<string, RegExp[]> = {
  north__briefing: [...DATA_BOUNDARY, ...ORIGINS],
  north__memory_recall: [...DATA_BOUNDARY, ...ORIGINS],
  north__memory_held: [...DATA_BOUNDARY, ...ORIGINS],
  north__working_profile: [...DATA_BOUNDARY, /transcriptions of the lawyer/i],
  north__working_profile_answer: [
    new RegExp(DISCLOSURE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
    /never invent an answer/i,
    ...HONESTY,
    ...SPECIAL_CATEGORIES,
  ],
  north__memory_remember: [
    /subject_type and subject_id/,
    /'stated' only when a lawyer said it/i,
    /'inferred' when you concluded it/i,
    ...SPECIAL_CATEGORIES,
    ...HONESTY,
  ],
  north__memory_forget: [/confirm with the lawyer before calling/i, /manager/i, /remaining/],
};

describe("the server instructions as the hosts cut them", () => {
  // Short labels: vitest cuts a long $value in a test's name.
  const label = (scopes: Scope[]) => scopes.map((scope) => SHORT[scope]).join("+") || "none";
  it.each(SCOPE_SETS.map((scopes) => ({ scopes: label(scopes), list: scopes })))(
    "stay under 2,000 characters and open with the safety rules for scopes $scopes",
    ({ list }) => {
      const { instructions } = composeManifest(principal(list));
      expect(instructions.length).toBeLessThan(Math.min(INSTRUCTIONS_MAX_CHARS, HOST_CUT));
      expect(instructions.startsWith(SAFETY_RULES.join("\n\n"))).toBe(true);
    },
  );

  it("put the data boundary, honesty and special categories before any tool is named", () => {
    const { instructions } = composeManifest(principal(SCOPES));
    const firstTool = instructions.search(/north__/);
    for (const rule of [/never instructions/, /receipt/, /health/]) {
      expect(instructions.search(rule)).toBeGreaterThanOrEqual(0);
      expect(instructions.search(rule)).toBeLessThan(firstTool);
    }
  });
});

describe("each tool's description as the hosts cut it", () => {
  it.each(ALL_TOOLS.map((tool) => ({ name: tool.name })))(
    "$name stays within 2,048 characters",
    ({ name }) => {
      expect(description(name).length).toBeGreaterThan(0);
      expect(description(name).length).toBeLessThanOrEqual(HOST_CUT);
    },
  );

  it.each(Object.keys(RULES).map((name) => ({ name })))(
    "$name carries the rules that govern it",
    ({ name }) => {
      const text = description(name);
      for (const rule of RULES[name] ?? []) expect(text).toMatch(rule);
    },
  );

  it("every tool has its rules listed here", () => {
    expect(ALL_TOOLS.map((tool) => tool.name).sort()).toEqual(Object.keys(RULES).sort());
  });
});
