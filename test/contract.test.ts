import { DISCLOSURE } from "@north/agent-runtime";
import {
  CAPABILITIES,
  type Capability,
  composeManifest,
  describeTool,
  foreignToolsInGuidance,
  type Principal,
  type Scope,
} from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { createTestApp, type TestApp } from "./support/mcp.ts";

let db: TestDatabase;
let harness: TestApp;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  harness = createTestApp({ db });
  ws = await createWorkspace(db.owner.db);
});
afterAll(async () => {
  await harness.close();
  await db.drop();
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
    const fr = await client.getPrompt({ name: "onboard", arguments: { locale: "fr" } });
    const text = (fr.messages[0]?.content as { text?: string } | undefined)?.text ?? "";
    expect(text).toContain("north__working_profile_answer");
    expect(text).toMatch(/une question à la fois/);
  });
});

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
    expect(instructions).toMatch(/one question at a time/i);
    expect(instructions).toMatch(/custom questions/i);
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

describe("published tool schemas", () => {
  it.each(CAPABILITIES.flatMap((c) => c.tools).map((t) => [t.name, t] as const))(
    "%s matches its reviewed snapshot",
    async (name, tool) => {
      const described = describeTool(tool);
      await expect(JSON.stringify(described, null, 2)).toMatchFileSnapshot(
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
