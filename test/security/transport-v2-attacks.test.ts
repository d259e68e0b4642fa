import { createRateLimiter } from "@north/mcp-server";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { createTestApp, type TestApp, useTestApp } from "../support/mcp.ts";
import {
  MODERN_ENVELOPE as ENVELOPE,
  MODERN_REVISION as MODERN,
  modernHeaders,
} from "../support/mcp-requests.ts";

/**
 * Attacks on the MCP transport as moved to the SDK's v2 line (createMcpHttpEntry): 2026-07-28
 * (stateless, per-request `_meta` envelope, Mcp-Method/Mcp-Name headers) next to 2025-11-25 and
 * 2025-06-18 on the same /mcp. Each test asserts the safe behaviour; a failing one is a weakness.
 */

const envelopeFor = (version: string) => ({
  ...ENVELOPE,
  "io.modelcontextprotocol/protocolVersion": version,
});
const SECRET = "SENTINEL-7f3a-question-text-should-never-echo";

const { db, harness } = useTestApp();
let ws: Workspace;

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
});

interface Reply {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: raw JSON-RPC replies.
  reply: any;
}

async function raw(
  app: TestApp,
  token: string | undefined,
  body: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await app.request("/mcp", {
    method: "POST",
    token,
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
  const text = await response.text();
  let reply: unknown;
  try {
    reply = text ? JSON.parse(text) : undefined;
  } catch {
    reply = undefined;
  }
  return { status: response.status, text, reply };
}

const post = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  raw(harness, token, JSON.stringify(body), headers);

const call = (name: string, args: Record<string, unknown>, meta: unknown = ENVELOPE, id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, _meta: meta },
});

/** A member token with only memory:read: no profile, no memory writes. */
const readOnly = () => harness.tokenFor(ws.member, { scopes: ["memory:read"] });

/** Neither a 500, nor -32603, nor a stack trace, nor the sentinel in the body. */
function expectClean(r: Reply, label = "") {
  expect(r.status, `${label} status ${r.text}`).not.toBe(500);
  expect(r.text, label).not.toContain("-32603");
  expect(r.text, label).not.toMatch(/\bat .+\.(ts|js|mjs):\d+/);
  expect(r.text, label).not.toContain(SECRET);
}

async function profileRows(userId: string) {
  return db.owner.client`select * from working_profile_answers where user_id = ${userId}`.catch(
    () => [],
  );
}

async function auditRows(userId: string) {
  return db.owner
    .client`select tool, outcome, request_id from audit_events where actor_id = ${userId} order by occurred_at`;
}

describe("scope boundaries across revisions", () => {
  it("refuses a 2026-07-28 call to a tool outside the token's scopes", async () => {
    const token = readOnly();
    const r = await post(
      token,
      call("north__working_profile_answer", { question: "Q?", answer: SECRET }),
      modernHeaders("tools/call", "north__working_profile_answer"),
    );
    expectClean(r);
    expect(r.reply?.result).toBeUndefined();
    expect([403, 400]).toContain(r.status);
  });

  it("refuses a 2026-07-28 prompts/get outside the token's scopes", async () => {
    const token = readOnly();
    const r = await post(
      token,
      {
        jsonrpc: "2.0",
        id: 2,
        method: "prompts/get",
        params: { name: "onboard", _meta: ENVELOPE },
      },
      modernHeaders("prompts/get", "onboard"),
    );
    expectClean(r);
    expect(r.reply?.result).toBeUndefined();
  });

  it("does not reveal out-of-scope tools or prompts through server/discover, tools/list or prompts/list", async () => {
    const token = readOnly();
    const found: string[] = [];
    for (const method of ["server/discover", "tools/list", "prompts/list"]) {
      const r = await post(
        token,
        { jsonrpc: "2.0", id: 3, method, params: { _meta: ENVELOPE } },
        modernHeaders(method),
      );
      expectClean(r, method);
      expect(r.status, method).toBe(200);
      found.push(r.text);
    }
    const tools = JSON.parse(found[1] as string).result.tools.map((t: { name: string }) => t.name);
    const prompts = JSON.parse(found[2] as string).result.prompts;
    expect(tools.sort()).toEqual(["north__briefing", "north__memory_held", "north__memory_recall"]);
    expect(prompts).toEqual([]);
    // The discover instructions name no tool the principal cannot call.
    for (const hidden of [
      "north__working_profile",
      "north__memory_remember",
      "north__memory_forget",
    ]) {
      expect(found[0], hidden).not.toContain(hidden);
    }
  });

  it("a listed tool's description names no tool the principal cannot call", async () => {
    const token = readOnly();
    const r = await post(
      token,
      { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: ENVELOPE } },
      modernHeaders("tools/list"),
    );
    const listed = r.reply.result.tools as { name: string; description: string }[];
    const names = new Set(listed.map((t) => t.name));
    const foreign = listed.flatMap((t) =>
      (t.description.match(/north__[a-z_]+/g) ?? [])
        .filter((n) => !names.has(n))
        .map((n) => `${t.name} -> ${n}`),
    );
    // Fails: north__briefing's description sends a memory:read-only token to north__working_profile.
    expect(foreign).toEqual([]);
  });

  it("refuses an Mcp-Name header naming an allowed tool while the body calls a forbidden one", async () => {
    const token = readOnly();
    const r = await post(
      token,
      call("north__memory_remember", { kind: "fact", body: SECRET, origin: "user" }),
      modernHeaders("tools/call", "north__memory_recall"),
    );
    expectClean(r);
    expect(r.reply?.result).toBeUndefined();
    expect(r.status).toBeGreaterThanOrEqual(400);
  });

  it("refuses Mcp-Method tools/list over a body that is tools/call", async () => {
    const token = readOnly();
    const r = await post(
      token,
      call("north__working_profile_answer", { question: "Q?", answer: SECRET }),
      modernHeaders("tools/list"),
    );
    expectClean(r);
    expect(r.reply?.result).toBeUndefined();
  });

  it("refuses a 2025 protocol header over a 2026-07-28 enveloped body calling a forbidden tool", async () => {
    const token = readOnly();
    for (const version of ["2025-11-25", "2025-06-18"]) {
      const r = await post(
        token,
        call("north__working_profile_answer", { question: "Q?", answer: SECRET }),
        { "MCP-Protocol-Version": version, "Mcp-Method": "tools/call" },
      );
      expectClean(r, version);
      expect(r.reply?.result, version).toBeUndefined();
    }
    expect(await profileRows(ws.member.userId)).toHaveLength(0);
  });

  it("refuses an envelope claiming a 2025 revision under a 2026 header, and serves it as 2025 with the same scopes otherwise", async () => {
    const token = readOnly();
    for (const headers of [
      modernHeaders("tools/call", "north__working_profile_answer"),
      { "MCP-Protocol-Version": "2025-11-25" },
      {},
    ]) {
      const r = await post(
        token,
        call(
          "north__working_profile_answer",
          { question: "Q?", answer: SECRET },
          envelopeFor("2025-11-25"),
        ),
        headers as Record<string, string>,
      );
      expectClean(r, JSON.stringify(headers));
      expect(r.reply?.result, JSON.stringify(headers)).toBeUndefined();
    }
  });

  it("hides a forbidden tool when the name differs only by case, whitespace or Unicode lookalikes", async () => {
    const token = readOnly();
    for (const name of [
      "North__working_profile_answer",
      "north__working_profile_answer ",
      "north__working_profile_answer\u0000",
      "north\u2010\u2010working_profile_answer",
    ]) {
      const r = await post(token, call(name, { question: "Q?", answer: SECRET }), {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": encodeURIComponent(name).includes("%") ? "x" : name,
      });
      expectClean(r, JSON.stringify(name));
      expect(r.reply?.result, JSON.stringify(name)).toBeUndefined();
    }
  });

  it("answers 401 without a token on the 2026-07-28 path, for every method", async () => {
    for (const method of ["server/discover", "tools/list", "tools/call"]) {
      const r = await post(
        undefined,
        {
          jsonrpc: "2.0",
          id: 1,
          method,
          params: { name: "north__memory_recall", _meta: ENVELOPE },
        },
        modernHeaders(method, method === "tools/call" ? "north__memory_recall" : undefined),
      );
      expect(r.status, method).toBe(401);
      expect(r.text, method).not.toContain("north__");
    }
  });
});

describe("batches", () => {
  it("refuses a batch holding a 2026-07-28 request, including one calling a forbidden tool", async () => {
    const token = readOnly();
    const r = await post(
      token,
      [
        call("north__memory_recall", { query: "x" }),
        call("north__working_profile_answer", { question: "Q?", answer: SECRET }, ENVELOPE, 2),
      ],
      modernHeaders("tools/call", "north__memory_recall"),
    );
    expectClean(r);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(r.reply)).not.toContain('"result"');
  });

  it("refuses a batch mixing a 2025 request and a 2026-07-28 one, forbidden tool hidden in the 2025 half", async () => {
    const token = readOnly();
    const legacyCall = {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: {
        name: "north__working_profile_answer",
        arguments: { question: "Q?", answer: SECRET },
      },
    };
    const r = await post(token, [
      { jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: ENVELOPE } },
      legacyCall,
    ]);
    expectClean(r);
    expect(JSON.stringify(r.reply ?? "")).not.toContain('"result"');
  });

  it("charges every message of a 2026-07-28-claiming batch against the protocol budget", async () => {
    const limited = createTestApp({
      db,
      limiter: createRateLimiter({
        writesPerMinute: 1_000,
        readsPerMinute: 1_000,
        protocolRequestsPerMinute: 5,
      }),
    });
    try {
      const token = limited.tokenFor(ws.member);
      const batch = Array.from({ length: 5 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "tools/list",
        params: { _meta: ENVELOPE },
      }));
      const first = await raw(limited, token, JSON.stringify(batch), modernHeaders("tools/list"));
      expectClean(first);
      const next = await raw(
        limited,
        token,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/list",
          params: { _meta: ENVELOPE },
        }),
        modernHeaders("tools/list"),
      );
      expect(next.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe("meters on the 2026-07-28 path", () => {
  it("meters every 2026-07-28 request, discover and list included", async () => {
    const limited = createTestApp({
      db,
      limiter: createRateLimiter({
        writesPerMinute: 1_000,
        readsPerMinute: 1_000,
        protocolRequestsPerMinute: 3,
      }),
    });
    try {
      const token = limited.tokenFor(ws.member);
      const statuses: number[] = [];
      for (const method of ["server/discover", "tools/list", "prompts/list", "server/discover"]) {
        const r = await raw(
          limited,
          token,
          JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { _meta: ENVELOPE } }),
          modernHeaders(method),
        );
        statuses.push(r.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });

  it("meters refused 2026-07-28 requests too (bad headers, bad envelope, removed methods)", async () => {
    const limited = createTestApp({
      db,
      limiter: createRateLimiter({
        writesPerMinute: 1_000,
        readsPerMinute: 1_000,
        protocolRequestsPerMinute: 3,
      }),
    });
    try {
      const token = limited.tokenFor(ws.member);
      const bodies: [unknown, Record<string, string>][] = [
        [{ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: ENVELOPE } }, {}],
        [
          { jsonrpc: "2.0", id: 1, method: "initialize", params: { _meta: ENVELOPE } },
          modernHeaders("initialize"),
        ],
        [
          {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/list",
            params: { _meta: { "io.modelcontextprotocol/protocolVersion": 5 } },
          },
          modernHeaders("tools/list"),
        ],
      ];
      for (const [body, headers] of bodies) {
        await raw(limited, token, JSON.stringify(body), headers);
      }
      const last = await raw(
        limited,
        token,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "server/discover",
          params: { _meta: ENVELOPE },
        }),
        modernHeaders("server/discover"),
      );
      expect(last.status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it("applies the write budget to a 2026-07-28 tools/call", async () => {
    const limited = createTestApp({
      db,
      limiter: createRateLimiter({
        writesPerMinute: 1,
        readsPerMinute: 1_000,
        protocolRequestsPerMinute: 1_000,
      }),
    });
    try {
      const local = await createWorkspace(db.owner.db);
      const token = limited.tokenFor(local.member);
      const results: unknown[] = [];
      for (const i of [1, 2]) {
        const r = await raw(
          limited,
          token,
          JSON.stringify(
            call("north__working_profile_answer", { question: `Q${i}?`, answer: `A${i}.` }),
          ),
          modernHeaders("tools/call", "north__working_profile_answer"),
        );
        results.push(r.reply?.result?.structuredContent);
      }
      expect(JSON.stringify(results[1])).toContain("RATE_LIMITED");
    } finally {
      await limited.close();
    }
  });
});

describe("tenant transaction and audit on the 2026-07-28 path", () => {
  it("writes one audit row, in the caller's organisation, for a 2026-07-28 tools/call", async () => {
    const local = await createWorkspace(db.owner.db);
    const token = harness.tokenFor(local.member);
    const r = await post(
      token,
      call("north__working_profile_answer", { question: "Which court?", answer: SECRET }),
      modernHeaders("tools/call", "north__working_profile_answer"),
    );
    expect(r.status).toBe(200);
    expect(r.reply.result.isError ?? false).toBe(false);
    const rows = await auditRows(local.member.userId);
    expect(rows.map((row) => row.tool)).toEqual(["north__working_profile_answer"]);
    const orgs = await db.owner
      .client`select organization_id from audit_events where actor_id = ${local.member.userId}`;
    expect(orgs.map((o) => o.organization_id)).toEqual([local.organizationId]);
    expect(JSON.stringify(rows)).not.toContain(SECRET);
  });

  it("audits a 2026-07-28 call refused by the write budget", async () => {
    const limited = createTestApp({
      db,
      limiter: createRateLimiter({
        writesPerMinute: 1,
        readsPerMinute: 1_000,
        protocolRequestsPerMinute: 1_000,
      }),
    });
    try {
      const local = await createWorkspace(db.owner.db);
      const token = limited.tokenFor(local.member);
      for (const i of [1, 2]) {
        await raw(
          limited,
          token,
          JSON.stringify(
            call("north__working_profile_answer", { question: `Q${i}?`, answer: "A." }),
          ),
          modernHeaders("tools/call", "north__working_profile_answer"),
        );
      }
      const rows = await auditRows(local.member.userId);
      expect(rows.map((row) => row.outcome)).toContain("rate_limited");
    } finally {
      await limited.close();
    }
  });
});

describe("errors and logs never echo request text", () => {
  it("answers malformed envelopes without 500, -32603, or the envelope's text", async () => {
    const token = harness.tokenFor(ws.member);
    const metas: unknown[] = [
      { "io.modelcontextprotocol/protocolVersion": SECRET },
      { "io.modelcontextprotocol/protocolVersion": 2026 },
      { "io.modelcontextprotocol/protocolVersion": null },
      { "io.modelcontextprotocol/protocolVersion": { SECRET } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": SECRET },
      { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: 5, version: SECRET } },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": SECRET },
      { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { sampling: SECRET } },
      { ...ENVELOPE, "io.modelcontextprotocol/logLevel": SECRET },
      { ...ENVELOPE, traceparent: SECRET },
      { ...ENVELOPE, [SECRET]: SECRET },
      SECRET,
      [SECRET],
      null,
    ];
    for (const meta of metas) {
      const r = await post(
        token,
        { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } },
        modernHeaders("tools/list"),
      );
      expectClean(r, JSON.stringify(meta));
    }
  });

  it("keeps request text out of every log line across the 2026-07-28 attacks", async () => {
    const token = harness.tokenFor(ws.member);
    const attempts: [unknown, Record<string, string>][] = [
      [
        call("north__working_profile_answer", { question: SECRET, answer: SECRET }),
        modernHeaders("tools/call", SECRET),
      ],
      [call(SECRET, { question: SECRET }), modernHeaders("tools/call", "north__working_profile")],
      [
        call("north__memory_remember", { kind: SECRET, body: SECRET, origin: SECRET }),
        modernHeaders("tools/call", "north__memory_remember"),
      ],
      [
        { jsonrpc: "2.0", id: 1, method: SECRET, params: { _meta: ENVELOPE } },
        modernHeaders(SECRET),
      ],
      [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": SECRET } },
        },
        modernHeaders("tools/list"),
      ],
      [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { _meta: { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": SECRET } },
        },
        modernHeaders("tools/list"),
      ],
      [
        call("north__working_profile_answer", { question: SECRET }, envelopeFor("2025-11-25")),
        modernHeaders("tools/call", "north__working_profile_answer"),
      ],
    ];
    const before = harness.logs.length;
    for (const [body, headers] of attempts) {
      const r = await post(token, body, headers);
      expect(r.status, JSON.stringify(headers).slice(0, 120)).not.toBe(500);
    }
    const lines = harness.logs.slice(before);
    expect(lines.length).toBeGreaterThan(0);
    const leaking = lines.filter((line) => line.includes(SECRET));
    expect(leaking).toEqual([]);
  });

  it("answers an enveloped initialize that claims a 2025 revision with bad params as -32602, never -32603", async () => {
    // NorthServer turns a bad initialize into -32602 only when it carries no envelope at all; an
    // envelope naming a 2025 revision is routed to the 2025 transport and reaches the SDK's own
    // initialize handler, which answers -32603 with the raw zod issue list.
    const token = harness.tokenFor(ws.member);
    const seen: string[] = [];
    for (const version of ["2025-11-25", "2025-06-18"]) {
      for (const headers of [{}, { "MCP-Protocol-Version": version }]) {
        const r = await post(
          token,
          { jsonrpc: "2.0", id: 1, method: "initialize", params: { _meta: envelopeFor(version) } },
          headers as Record<string, string>,
        );
        seen.push(`${version} ${JSON.stringify(headers)} -> ${r.status} ${r.reply?.error?.code}`);
      }
    }
    expect(seen.filter((line) => line.includes("-32603") || / 500 /.test(line))).toEqual([]);
  });

  it("answers odd JSON bodies under a 2026-07-28 header without 500", async () => {
    const token = harness.tokenFor(ws.member);
    for (const body of [
      "null",
      "5",
      '"x"',
      "[]",
      "{}",
      "[null]",
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
      '{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    ]) {
      for (const headers of [modernHeaders("tools/list"), {}]) {
        const r = await raw(harness, token, body, headers);
        expectClean(r, `${body} ${JSON.stringify(headers)}`);
      }
    }
  });

  it("does not run a tools/call sent as a 2026-07-28 notification", async () => {
    const local = await createWorkspace(db.owner.db);
    const token = harness.tokenFor(local.member);
    const r = await post(
      token,
      {
        jsonrpc: "2.0",
        method: "tools/call",
        params: {
          name: "north__working_profile_answer",
          arguments: { question: "Notified?", answer: "Yes." },
          _meta: ENVELOPE,
        },
      },
      modernHeaders("tools/call", "north__working_profile_answer"),
    );
    expectClean(r);
    expect(await auditRows(local.member.userId)).toHaveLength(0);
  });
});

describe("oversized envelopes", () => {
  it("refuses a body over the limit with 413 on the 2026-07-28 path", async () => {
    const token = harness.tokenFor(ws.member);
    const meta = { ...ENVELOPE, pad: "x".repeat(1024 * 1024 + 10) };
    const r = await post(
      token,
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } },
      modernHeaders("tools/list"),
    );
    expect(r.status).toBe(413);
  });

  it("answers a deeply nested envelope under the limit without 500", async () => {
    const token = harness.tokenFor(ws.member);
    const depth = 100_000;
    const nested = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    for (const key of [
      "io.modelcontextprotocol/clientCapabilities",
      "io.modelcontextprotocol/clientInfo",
      "pad",
    ]) {
      const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"r","version":"0"},"io.modelcontextprotocol/clientCapabilities":{},"${key}":${nested}}}}`;
      const r = await raw(harness, token, body, modernHeaders("tools/list"));
      expectClean(r, key);
    }
  });

  it("answers a deeply nested object in tool arguments under the limit without 500", async () => {
    const token = harness.tokenFor(ws.member);
    const depth = 100_000;
    const nested = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"north__working_profile","arguments":{"view":"all","x":${nested}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"r","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`;
    const r = await raw(
      harness,
      token,
      body,
      modernHeaders("tools/call", "north__working_profile"),
    );
    expectClean(r);
  });

  it("answers an envelope with many keys under the limit quickly and without 500", async () => {
    const token = harness.tokenFor(ws.member);
    const meta: Record<string, unknown> = { ...ENVELOPE };
    for (let i = 0; i < 60_000; i++) meta[`k${i}`] = i;
    const started = performance.now();
    const r = await post(
      token,
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } },
      modernHeaders("tools/list"),
    );
    expectClean(r);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
