import { CLOSING_REMINDER, DISCLOSURE, SAFETY_RULES } from "@north/agent-runtime";
import {
  CAPABILITIES,
  type Capability,
  capabilityActivations,
  composeManifest,
  describeTool,
  foreignToolsInGuidance,
  type Principal,
  type Scope,
} from "@north/mcp-server";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { useTestApp } from "./support/mcp.ts";

const { db, harness } = useTestApp();
let ws: Workspace;

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
});

const PROFILE_TOOLS = ["north__working_profile", "north__working_profile_answer"];
const MEMORY_READ_TOOLS = ["north__briefing", "north__memory_recall", "north__memory_held"];
const MEMORY_WRITE_TOOLS = ["north__memory_remember", "north__memory_forget"];
const KINDS: { kind: string; scopes: Scope[]; tools: string[]; prompts: string[] }[] = [
  {
    kind: "full",
    scopes: ["profile:write", "memory:read", "memory:write", "admin"],
    tools: [...PROFILE_TOOLS, ...MEMORY_READ_TOOLS, ...MEMORY_WRITE_TOOLS],
    prompts: ["onboard"],
  },
  { kind: "profile writer", scopes: ["profile:write"], tools: PROFILE_TOOLS, prompts: ["onboard"] },
  { kind: "read-only", scopes: ["memory:read"], tools: MEMORY_READ_TOOLS, prompts: [] },
  { kind: "memory writer", scopes: ["memory:write"], tools: MEMORY_WRITE_TOOLS, prompts: [] },
  { kind: "no scopes", scopes: [], tools: [], prompts: [] },
];

describe("what each kind of principal is offered", () => {
  it.each(KINDS)(
    "lists the tools and prompts of a $kind principal",
    async ({ scopes, tools, prompts }) => {
      const client = await harness.connect(ws.member, { scopes });
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...tools].sort());
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(prompts);
    },
  );

  it("8. refuses a read-only principal that calls the profile tools or the prompt anyway", async () => {
    const client = await harness.connect(ws.member, { scopes: ["memory:read"] });
    for (const name of PROFILE_TOOLS) {
      await expect(
        client.callTool({ name, arguments: { question: "Q?", answer: "A." } }),
      ).rejects.toThrow(/403|Insufficient scope/);
    }
    await expect(client.getPrompt({ name: "onboard" })).rejects.toThrow(/403|Insufficient scope/);
    const [rows] = await db.owner
      .client`select count(*)::int as n from working_profile_answers where owner_user_id = ${ws.member.userId}`;
    expect(rows?.n).toBe(0);
  });

  it("answers a call outside the principal's scopes with 403 and an insufficient_scope challenge", async () => {
    const token = harness.tokenFor(ws.member, { scopes: ["memory:read"] });
    const response = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: {
          name: "north__working_profile_answer",
          arguments: { question: "Q?", answer: "A." },
        },
      }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toMatch(
      /error="insufficient_scope", scope="profile:write"/,
    );
  });

  it("answers an unknown tool with a JSON-RPC error naming scopes, not a crash", async () => {
    const client = await harness.connect(ws.member, { scopes: ["profile:write"] });
    await expect(client.callTool({ name: "north__nothing", arguments: {} })).rejects.toThrow(
      /Unknown tool/,
    );
  });

  it("gives the onboard prompt its title and an optional locale", async () => {
    const client = await harness.connect(ws.member, { scopes: ["profile:write"] });
    const [prompt] = (await client.listPrompts()).prompts;
    expect(prompt).toMatchObject({
      name: "onboard",
      title: "Onboard me on North",
      arguments: [{ name: "locale", required: false }],
    });
    for (const locale of ["en", "fr"]) {
      const prompt = await client.getPrompt({ name: "onboard", arguments: { locale } });
      const text = (prompt.messages[0]?.content as { text?: string } | undefined)?.text ?? "";
      for (const tool of PROFILE_TOOLS) expect(text).toContain(tool);
      // The model must ask for suggestions in the prompt's own language.
      expect(text).toMatch(new RegExp(`locale\\W+${locale}\\b`));
    }
  });

  it("writes the French prompt without an English sentence", async () => {
    const client = await harness.connect(ws.member, { scopes: ["profile:write"] });
    const fr = await client.getPrompt({ name: "onboard", arguments: { locale: "fr" } });
    const text = (fr.messages[0]?.content as { text?: string } | undefined)?.text ?? "";
    const prose = text.replace(/north__[a-z_]+|view "next"|locale "fr"/g, "");
    expect(prose).not.toMatch(ENGLISH_WORDS);
    expect(prose).not.toContain(DISCLOSURE);
  });

  it("keeps the English prompt in the lawyer's own voice", async () => {
    const client = await harness.connect(ws.member, { scopes: ["profile:write"] });
    const en = await client.getPrompt({ name: "onboard", arguments: { locale: "en" } });
    const text = (en.messages[0]?.content as { text?: string } | undefined)?.text ?? "";
    expect(text).not.toMatch(/\bthe lawyer\b/i);
    expect(text).toMatch(/\b(I|me|my)\b/);
  });
});

/** Common English function words: none may appear in French model-facing text. */
const ENGLISH_WORDS =
  /\b(the|and|you|your|with|what|before|after|then|first|each|save|never|workspace)\b/i;

describe("server instructions", () => {
  const principal = (scopes: Scope[]): Principal => ({
    organizationId: ws.organizationId,
    userId: ws.member.userId,
    role: "member",
    scopes,
    tokenId: null,
  });

  it("name both profile tools and carry the disclosure for a profile writer", async () => {
    const client = await harness.connect(ws.member, { scopes: ["profile:write"] });
    const instructions = client.getInstructions() ?? "";
    for (const tool of PROFILE_TOOLS) expect(instructions).toContain(tool);
    expect(instructions).toContain(DISCLOSURE);
  });

  it.each(KINDS)(
    "open with the safety rules and end with the data-boundary and honesty reminder for a $kind principal",
    ({ scopes }) => {
      const instructions = composeManifest(principal(scopes)).instructions;
      expect(instructions.startsWith(SAFETY_RULES.join("\n\n"))).toBe(true);
      expect(instructions.endsWith(CLOSING_REMINDER)).toBe(true);
    },
  );

  it("give one order at the start of a conversation: the briefing first, which holds the profile", () => {
    const instructions = composeManifest(
      principal(["profile:write", "memory:read", "memory:write"]),
    ).instructions;
    const named = instructions.match(/north__[a-z_]+/g) ?? [];
    expect(named[0]).toBe("north__briefing");
  });

  it("cover special categories of personal data in the safety rules and the remember tool", () => {
    const manifest = composeManifest(principal(["memory:write"]));
    const remember = manifest.tools.find((tool) => tool.name === "north__memory_remember");
    for (const text of [SAFETY_RULES.join(" "), manifest.instructions, remember?.description]) {
      for (const category of [/health/i, /union/i, /belief/i, /offence/i]) {
        expect(text).toMatch(category);
      }
    }
    expect(remember?.description).toContain("subject_type");
  });

  it("imply no completion anywhere the model reads", () => {
    const manifest = composeManifest(principal(["profile:write"]));
    const text = JSON.stringify(manifest).toLowerCase();
    for (const phrase of [
      "completion",
      "profile is complete",
      "complete the profile",
      "% complete",
      "progress",
      "all questions answered",
      "remaining",
    ]) {
      expect(text).not.toContain(phrase);
    }
  });

  it("say nothing about the working profile to a read-only principal", () => {
    const instructions = composeManifest(principal(["memory:read"])).instructions;
    expect(instructions).not.toContain("north__working_profile");
  });
});

describe("capability ownership", () => {
  const toolNames = CAPABILITIES.flatMap((c) => c.tools.map((t) => t.name));

  it("gives every tool exactly one capability", () => {
    expect(new Set(toolNames).size).toBe(toolNames.length);
    const listed = composeManifest({
      organizationId: ws.organizationId,
      userId: ws.member.userId,
      role: "manager",
      scopes: ["profile:write", "memory:read", "memory:write", "admin"],
      tokenId: null,
    }).tools.map((t) => t.name);
    expect([...listed].sort()).toEqual([...toolNames].sort());
  });

  it.each(CAPABILITIES.map((c) => [c.id, c] as const))(
    "%s's guidance names only tools it owns",
    (_id, capability: Capability) => {
      expect(foreignToolsInGuidance(capability)).toEqual([]);
    },
  );

  it("catches guidance that names a tool its capability does not own", () => {
    const rogue: Capability = {
      id: "rogue",
      scopes: [],
      tools: [],
      prompts: [],
      guidance: ["Call north__working_profile first."],
    };
    expect(foreignToolsInGuidance(rogue)).toEqual(["north__working_profile"]);
  });
});

/**
 * A published tool without its words (`title`, `description` at any depth): the snapshot pins
 * structure — names, types, bounds, enums, required fields, annotations — and leaves wording free.
 */
function structureOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(structureOf);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(
          ([key, v]) => !((key === "description" || key === "title") && typeof v === "string"),
        )
        .map(([key, v]) => [key, structureOf(v)]),
    );
  }
  return value;
}

describe("published tool schemas", () => {
  it.each(CAPABILITIES.flatMap((c) => c.tools).map((t) => [t.name, t] as const))(
    "%s matches its reviewed snapshot",
    async (name, tool) => {
      const described = describeTool(tool);
      expect(described.description?.length ?? 0).toBeGreaterThan(0);
      await expect(JSON.stringify(structureOf(described), null, 2)).toMatchFileSnapshot(
        `./__snapshots__/tools/${name}.json`,
      );
      expect(described.annotations).toEqual(
        expect.objectContaining({
          readOnlyHint: expect.any(Boolean),
          destructiveHint: expect.any(Boolean),
          idempotentHint: expect.any(Boolean),
          openWorldHint: expect.any(Boolean),
        }),
      );
    },
  );

  it("marks the read tool read-only and idempotent, and the save tool idempotent and not destructive", () => {
    const tools = Object.fromEntries(
      CAPABILITIES.flatMap((c) => c.tools).map((t) => [t.name, t.annotations]),
    );
    expect(tools.north__working_profile).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(tools.north__working_profile_answer).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  });

  it("does not state a write-time rule on the lookup tools' subject fields", () => {
    for (const name of ["north__memory_recall", "north__memory_held", "north__memory_forget"]) {
      const tool = CAPABILITIES.flatMap((c) => c.tools).find((t) => t.name === name);
      const schema = describeTool(tool as NonNullable<typeof tool>).inputSchema as {
        properties: Record<string, { description?: string }>;
      };
      for (const field of ["subject_type", "subject_id"]) {
        expect(schema.properties[field]?.description ?? "").not.toMatch(/observation|required/i);
      }
    }
  });

  it("states the expiry bound in the published schema, not only in its text", () => {
    const tool = CAPABILITIES.flatMap((c) => c.tools).find(
      (t) => t.name === "north__memory_remember",
    );
    const schema = describeTool(tool as NonNullable<typeof tool>).inputSchema as {
      properties: Record<string, { minimum?: number; maximum?: number }>;
    };
    expect(schema.properties.expires_in_days).toMatchObject({ minimum: 1, maximum: 365 });
  });

  it("serves the same manifest at GET /manifest as the model receives over MCP", async () => {
    const token = harness.tokenFor(ws.member, { scopes: ["profile:write"] });
    const response = await harness.request("/manifest", { token });
    expect(response.status).toBe(200);
    const manifest = (await response.json()) as {
      instructions: string;
      tools: { name: string; inputSchema: unknown }[];
    };
    const client = await harness.connect(ws.member, { scopes: ["profile:write"] });
    expect(manifest.instructions).toBe(client.getInstructions());
    const listed = (await client.listTools()).tools;
    expect(manifest.tools).toEqual(JSON.parse(JSON.stringify(listed)));
  });
});

describe("capability activations in GET /manifest", () => {
  it("shows the working profile off with scope_off and semantic recall off with no_embedder for a read-only token", async () => {
    const token = harness.tokenFor(ws.member, { scopes: ["memory:read"] });
    const response = await harness.request("/manifest", { token });
    const manifest = (await response.json()) as {
      capabilities: { id: string; active: boolean; reason?: string }[];
    };
    const byId = Object.fromEntries(manifest.capabilities.map((c) => [c.id, c]));
    expect(byId["working-profile"]).toMatchObject({ active: false, reason: "scope_off" });
    expect(byId["memory-write"]).toMatchObject({ active: false, reason: "scope_off" });
    expect(byId["memory-read"]).toEqual(expect.objectContaining({ active: true }));
    expect(byId["memory-read"]).not.toHaveProperty("reason");
    expect(byId["semantic-recall"]).toMatchObject({ active: false, reason: "no_embedder" });
    expect(manifest.capabilities.map((c) => c.id).sort()).toEqual(
      [...CAPABILITIES.map((c) => c.id), "semantic-recall"].sort(),
    );
  });

  it("turns semantic recall on when an embedder is configured, and off again without the scope", () => {
    const full = capabilityActivations({ ...principalOf(ws, ["memory:read"]) }, { embedder: true });
    expect(full.find((c) => c.id === "semantic-recall")).toEqual(
      expect.objectContaining({ active: true }),
    );
    const failing = capabilityActivations(principalOf(ws, ["memory:read"]), {
      embedder: true,
      embedderFailure: "timeout",
    });
    expect(failing.find((c) => c.id === "semantic-recall")).toMatchObject({
      active: false,
      reason: "degraded:timeout",
    });
    const none = capabilityActivations(principalOf(ws, ["profile:write"]), { embedder: true });
    expect(none.find((c) => c.id === "semantic-recall")).toMatchObject({
      active: false,
      reason: "scope_off",
    });
  });
});

function principalOf(workspace: Workspace, scopes: Scope[]): Principal {
  return {
    organizationId: workspace.organizationId,
    userId: workspace.member.userId,
    role: "member",
    scopes,
    tokenId: null,
  };
}
