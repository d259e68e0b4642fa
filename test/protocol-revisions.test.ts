import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { buildMcpApp, createRateLimiter, type Principal } from "@north/mcp-server";
import { describe, expect, it } from "vitest";
import { createWorkspace } from "./support/fixtures.ts";
import { capturingLogger } from "./support/logs.ts";
import { ALL_SCOPES, TEST_AUDIT_KEY, useTestApp } from "./support/mcp.ts";
import {
  MODERN_ENVELOPE as ENVELOPE,
  MODERN_REVISION as MODERN,
  modernHeaders,
} from "./support/mcp-requests.ts";

/**
 * MCP 2026-07-28 (stateless, `server/discover`, a version envelope on every request) and the 2025
 * revisions negotiated by `initialize`, on the same /mcp: a client of any of them gets the same
 * tools, prompts, instructions and receipts (SPEC §1 "Protocol").
 */

const BROWSER_ORIGIN = "http://localhost:6274";
const { db, harness } = useTestApp({ allowedOrigins: [BROWSER_ORIGIN] });

/** The minimal surface the three clients share, so one scenario drives each. */
interface AnyClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getInstructions(): string | undefined;
  callTool(call: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

type Kind = "v1" | "v2 pinned" | "v2 auto";

/**
 * Each kind of client by name, on purpose, whatever `NORTH_TEST_MCP_CLIENT` says: this suite
 * compares the revisions side by side in one run (test/support/mcp-client.ts is for the others).
 */
async function connect(kind: Kind, token: string): Promise<{ client: AnyClient; era: string }> {
  const fetch = async (url: string | URL, init?: RequestInit) =>
    harness.app.request(String(url), init as RequestInit);
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  const url = new URL("http://localhost/mcp");
  if (kind === "v1") {
    const client = new ClientV1({ name: "north-test-v1", version: "0.0.0" });
    await client.connect(new TransportV1(url, { fetch, requestInit }));
    return { client: client as unknown as AnyClient, era: "legacy" };
  }
  const client = new ClientV2(
    { name: "north-test-v2", version: "0.0.0" },
    { versionNegotiation: { mode: kind === "v2 pinned" ? { pin: MODERN } : "auto" } },
  );
  await client.connect(new TransportV2(url, { fetch, requestInit }));
  return { client: client as unknown as AnyClient, era: client.getProtocolEra() ?? "none" };
}

/** The structured receipt of a call, or its text when it has none. */
function receiptOf(result: unknown) {
  const { structuredContent, content, isError } = result as {
    structuredContent?: Record<string, unknown>;
    content?: { text?: string }[];
    isError?: boolean;
  };
  return { isError: isError ?? false, structured: structuredContent, text: content?.[0]?.text };
}

/** What one lawyer sees and gets, in one fresh workspace, through one kind of client. */
async function scenario(kind: Kind) {
  const ws = await createWorkspace(db.owner.db);
  const { client, era } = await connect(kind, harness.tokenFor(ws.member));
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    const saved = receiptOf(
      await client.callTool({
        name: "north__working_profile_answer",
        arguments: { question: "Which courts do you end up in most?", answer: "Paris." },
      }),
    );
    const read = receiptOf(
      await client.callTool({ name: "north__working_profile", arguments: { view: "all" } }),
    );
    return { era, tools, prompts, instructions: client.getInstructions(), saved, read };
  } finally {
    await client.close();
  }
}

/** Ids and times differ per workspace and call; everything else must be the same. */
function comparable(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v) =>
      typeof v === "string" &&
      (/(_at|_id|^id)$/.test(key) ||
        /^[0-9a-f-]{36}$/.test(v) ||
        /^\d{4}-\d\d-\d\dT/.test(v) ||
        key === "version")
        ? "…"
        : v,
    ),
  );
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  const ws = await createWorkspace(db.owner.db);
  const response = await harness.request("/mcp", {
    method: "POST",
    token: harness.tokenFor(ws.member),
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, reply: text ? JSON.parse(text) : undefined };
}

describe("one North for every protocol revision", () => {
  it("gives the v1 client, the v2 client pinned to 2026-07-28 and the v2 client in auto mode the same tools, prompts, instructions and receipts", async () => {
    const v1 = await scenario("v1");
    const pinned = await scenario("v2 pinned");
    const auto = await scenario("v2 auto");
    expect([v1.era, pinned.era, auto.era]).toEqual(["legacy", "modern", "modern"]);
    expect(v1.tools).toContain("north__working_profile_answer");
    expect(v1.prompts.length).toBeGreaterThan(0);
    expect(v1.instructions?.length ?? 0).toBeGreaterThan(0);
    expect(v1.saved.structured?.outcome).toBe("created");
    expect(v1.read.isError).toBe(false);
    for (const other of [pinned, auto]) {
      expect(other.tools).toEqual(v1.tools);
      expect(other.prompts).toEqual(v1.prompts);
      expect(other.instructions).toBe(v1.instructions);
      expect(comparable(other.saved)).toEqual(comparable(v1.saved));
      expect(comparable(other.read)).toEqual(comparable(v1.read));
    }
  });

  it("answers server/discover with 2026-07-28, the instructions and a private caching hint", async () => {
    const { status, reply } = await post(
      { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } },
      modernHeaders("server/discover"),
    );
    expect(status).toBe(200);
    expect(reply.result.supportedVersions).toContain(MODERN);
    expect(reply.result.instructions.length).toBeGreaterThan(0);
    expect(reply.result.cacheScope).toBe("private");
    expect(reply.result.ttlMs).toBeGreaterThan(0);
  });

  it("marks tools/list and prompts/list private with a lifetime on 2026-07-28, and not on 2025", async () => {
    for (const method of ["tools/list", "prompts/list"]) {
      const modern = await post(
        { jsonrpc: "2.0", id: 2, method, params: { _meta: ENVELOPE } },
        modernHeaders(method),
      );
      expect(modern.status).toBe(200);
      expect(modern.reply.result.cacheScope).toBe("private");
      expect(modern.reply.result.ttlMs).toBeGreaterThan(0);
      const legacy = await post({ jsonrpc: "2.0", id: 3, method });
      expect(legacy.status).toBe(200);
      expect(legacy.reply.result.ttlMs).toBeUndefined();
      expect(legacy.reply.result.cacheScope).toBeUndefined();
    }
  });

  it("lists tools in the same order every time", async () => {
    const orders = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const { reply } = await post(
        { jsonrpc: "2.0", id: i, method: "tools/list", params: { _meta: ENVELOPE } },
        modernHeaders("tools/list"),
      );
      orders.add(reply.result.tools.map((t: { name: string }) => t.name).join(","));
    }
    expect(orders.size).toBe(1);
  });

  it("refuses an unsupported protocol version with the revision's error naming the supported versions, never a 500", async () => {
    const envelope = { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01" };
    const { status, reply } = await post(
      { jsonrpc: "2.0", id: 7, method: "tools/list", params: { _meta: envelope } },
      { ...modernHeaders("tools/list"), "MCP-Protocol-Version": "2099-01-01" },
    );
    expect(status).toBe(400);
    expect(reply.id).toBe(7);
    expect(reply.error.code).toBe(-32022);
    expect(reply.error.data.supported).toContain(MODERN);
    expect(reply.error.data.requested).toBe("2099-01-01");
  });

  it("refuses a malformed protocol version on a 2025 request with 400 naming the supported versions", async () => {
    const { status, reply } = await post(
      { jsonrpc: "2.0", id: 8, method: "tools/list" },
      { "MCP-Protocol-Version": "not-a-version" },
    );
    expect(status).toBe(400);
    expect(JSON.stringify(reply.error)).toContain("2025-11-25");
  });

  it("answers initialize, a method 2026-07-28 removed, with 404 and -32601 when it carries the envelope", async () => {
    const params = {
      protocolVersion: MODERN,
      capabilities: {},
      clientInfo: { name: "raw", version: "0.0.0" },
      _meta: ENVELOPE,
    };
    for (const sent of [params, { _meta: ENVELOPE }]) {
      const { status, reply } = await post(
        { jsonrpc: "2.0", id: 10, method: "initialize", params: sent },
        modernHeaders("initialize"),
      );
      expect(status).toBe(404);
      expect(reply.error.code).toBe(-32601);
      expect(reply.id).toBe(10);
    }
  });

  it("refuses an Mcp-Method or Mcp-Name header that disagrees with the body with 400 and -32020", async () => {
    const call = {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "north__working_profile", arguments: {}, _meta: ENVELOPE },
    };
    for (const headers of [
      modernHeaders("tools/list", "north__working_profile"),
      modernHeaders("tools/call", "north__memory_recall"),
      { "MCP-Protocol-Version": MODERN },
    ]) {
      const { status, reply } = await post(call, headers);
      expect(status, JSON.stringify(headers)).toBe(400);
      expect(reply.error.code).toBe(-32020);
      expect(reply.id).toBe(9);
    }
  });

  it("answers a 2026-07-28 call whose token cannot be checked with NORTH_UNAVAILABLE, as a 2025 one", async () => {
    const ws = await createWorkspace(db.owner.db);
    const principal: Principal = {
      ...ws.member,
      role: "member",
      scopes: ALL_SCOPES,
      tokenId: null,
    };
    let down = false;
    const limiter = createRateLimiter({
      writesPerMinute: 100,
      readsPerMinute: 100,
      protocolRequestsPerMinute: 100,
    });
    const app = buildMcpApp({
      db: db.app.db,
      resolvePrincipal: async () => {
        if (down) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
        return principal;
      },
      limiter,
      logger: capturingLogger().logger,
      auditKey: TEST_AUDIT_KEY,
    });
    const client = new ClientV2(
      { name: "north-test-v2", version: "0.0.0" },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(
      new TransportV2(new URL("http://localhost/mcp"), {
        fetch: async (url, init) => app.request(String(url), init as RequestInit),
      }),
    );
    try {
      down = true;
      const result = await client.callTool({
        name: "north__working_profile_answer",
        arguments: { question: "Down?", answer: "Yes." },
      });
      expect(result.isError).toBe(true);
      expect((result.structuredContent as { code?: string }).code).toBe("NORTH_UNAVAILABLE");
    } finally {
      await client.close();
      await limiter.close();
    }
  });

  it("lets a browser client on an allowed origin send the 2026-07-28 headers", async () => {
    const response = await harness.request("/mcp", {
      method: "OPTIONS",
      headers: {
        Origin: BROWSER_ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "mcp-method, mcp-name, mcp-protocol-version",
      },
    });
    const allowed = (response.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const header of ["mcp-method", "mcp-name", "mcp-protocol-version"]) {
      expect(allowed).toContain(header);
    }
  });

  it("negotiates 2025-06-18 and 2025-11-25 through initialize and lists the same tools at each", async () => {
    const listed: string[][] = [];
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const init = await post({
        jsonrpc: "2.0",
        id: 11,
        method: "initialize",
        params: {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: "raw", version: "0.0.0" },
        },
      });
      expect(init.status).toBe(200);
      expect(init.reply.result.protocolVersion).toBe(version);
      expect(init.reply.result.instructions.length).toBeGreaterThan(0);
      const tools = await post(
        { jsonrpc: "2.0", id: 12, method: "tools/list" },
        { "MCP-Protocol-Version": version },
      );
      expect(tools.status).toBe(200);
      listed.push(tools.reply.result.tools.map((t: { name: string }) => t.name));
    }
    expect(listed[0]?.length ?? 0).toBeGreaterThan(0);
    expect(listed[1]).toEqual(listed[0]);
  });
});
