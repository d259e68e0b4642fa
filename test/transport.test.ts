import { randomUUID } from "node:crypto";
import { CAPABILITIES, type Capability, type ToolDefinition } from "@north/mcp-server";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { createTestApp, useTestApp } from "./support/mcp.ts";

const SENTINEL = `BODY-${randomUUID()}`;

const emptyInput = z.object({});
const emptyOutput = z.object({ ok: z.boolean() });
/** A tool whose handler fails inside PostgreSQL with the sentinel in the failing value. */
const failingTool = {
  name: "north__test_failure",
  title: "Failing tool (test only)",
  description: "Fails on purpose.",
  kind: "write",
  inputSchema: emptyInput,
  outputSchema: emptyOutput,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async handler(_input, ctx) {
    await ctx.tx.execute(sql`select ${SENTINEL}::int`);
    return { structured: { ok: true }, text: "unreachable", audit: { outcome: "created" } };
  },
} satisfies ToolDefinition<typeof emptyInput, typeof emptyOutput>;
const failing: Capability = {
  id: "test-failure",
  scopes: [],
  tools: [failingTool],
  prompts: [],
  guidance: [],
};

const { db, harness } = useTestApp({ capabilities: [...CAPABILITIES, failing] });
let ws: Workspace;
let token: string;

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "0" },
  },
});
const mcpHeaders = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
};

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
  token = harness.tokenFor(ws.member);
});

describe("transport safety", () => {
  it("answers an initialize with JSON and no session id (stateless)", async () => {
    const response = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: mcpHeaders,
      body: initialize,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("mcp-session-id")).toBeNull();
  });

  it("refuses a foreign Origin, or our host name on another port, with 403; accepts its own origin or none", async () => {
    for (const origin of ["https://evil.example", "http://localhost:9999", "null"]) {
      const refused = await harness.request("/mcp", {
        method: "POST",
        token,
        headers: { ...mcpHeaders, Origin: origin },
        body: initialize,
      });
      expect(refused.status).toBe(403);
    }
    for (const fetchSite of ["same-site", "cross-site", "none"]) {
      const refused = await harness.request("/mcp", {
        method: "POST",
        token,
        headers: { ...mcpHeaders, Origin: "null", "Sec-Fetch-Site": fetchSite },
        body: initialize,
      });
      expect(refused.status).toBe(403);
    }
    const own = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: { ...mcpHeaders, Origin: "http://localhost" },
      body: initialize,
    });
    expect(own.status).toBe(200);
    // Under Referrer-Policy: no-referrer a browser posts `Origin: null` even to its own origin.
    const ownOpaque = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: { ...mcpHeaders, Origin: "null", "Sec-Fetch-Site": "same-origin" },
      body: initialize,
    });
    expect(ownOpaque.status).toBe(200);
    const bare = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: mcpHeaders,
      body: initialize,
    });
    expect(bare.status).toBe(200);
  });

  it("refuses an unknown Host with 403 (DNS rebinding)", async () => {
    const response = await harness.app.request("http://rebound.example:7410/mcp", {
      method: "POST",
      headers: { ...mcpHeaders, Authorization: `Bearer ${token}`, Host: "rebound.example:7410" },
      body: initialize,
    });
    expect(response.status).toBe(403);
  });

  it("accepts a browser origin configured exactly, and only that port", async () => {
    const configured = createTestApp({ db, allowedOrigins: ["http://localhost:6274"] });
    try {
      const send = (origin: string) =>
        configured.request("/mcp", {
          method: "POST",
          token: configured.tokenFor(ws.member),
          headers: { ...mcpHeaders, Origin: origin },
          body: initialize,
        });
      expect((await send("http://localhost:6274")).status).toBe(200);
      expect((await send("http://localhost:6275")).status).toBe(403);
    } finally {
      await configured.close();
    }
  });

  it("refuses a body over 1 MiB with 413 before parsing it", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "ping",
      params: { pad: "x".repeat(1024 * 1024) },
    });
    const response = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: mcpHeaders,
      body: big,
    });
    expect(response.status).toBe(413);
  });

  it("answers 401 with a Bearer challenge without a token, even with a session id", async () => {
    const response = await harness.request("/mcp", {
      method: "POST",
      headers: { ...mcpHeaders, "Mcp-Session-Id": randomUUID() },
      body: initialize,
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("refuses a token in the query string", async () => {
    const response = await harness.request(`/mcp?access_token=${token}`, {
      method: "POST",
      headers: mcpHeaders,
      body: initialize,
    });
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain(token);
  });

  it("answers GET and DELETE /mcp with 405 for a stateless server", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await harness.request("/mcp", {
        method,
        token,
        headers: { Accept: "text/event-stream" },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });

  it("turns an internal failure into JSON-RPC -32603 with no detail, audited and logged without the body", async () => {
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "north__test_failure", arguments: {} },
    });
    const response = await harness.request("/mcp", {
      method: "POST",
      token,
      headers: mcpHeaders,
      body: call,
    });
    const body = (await response.json()) as {
      error?: { code: number; message: string; data?: unknown };
    };
    expect(body.error).toEqual({ code: -32603, message: "Internal error" });
    const rows = await db.owner
      .client`select outcome from audit_events where tool = 'north__test_failure'`;
    expect(rows.map((r) => r.outcome)).toEqual(["error"]);
    const logs = harness.logs.join("");
    expect(logs).toContain('"tool call failed"');
    expect(logs).not.toContain(SENTINEL);
  });

  it("reports health and readiness", async () => {
    expect((await harness.request("/healthz")).status).toBe(200);
    const ready = await harness.request("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: "ok",
      database: "ok",
      limiter: { backend: "memory" },
    });
  });

  it("requires authentication for the manifest", async () => {
    expect((await harness.request("/manifest")).status).toBe(401);
  });
});
