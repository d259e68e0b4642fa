import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { isJSONRPCRequest, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { autoQuestionId } from "@north/agent-runtime";
import { createMatter, withOrganization } from "@north/db";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { useTestApp } from "../support/mcp.ts";
import { remember } from "../support/memory-tools.ts";
import { saveAnswer } from "../support/tools.ts";
import {
  anyJson,
  argumentsFor,
  CATEGORY_SAMPLES,
  extraFields,
  type FieldDomain,
  fuzzParams,
  hostileString,
  type ObjectJsonSchema,
  toJsonText,
} from "./arbitraries.ts";

/**
 * SPEC §4, §5 and §9 under hostile input (issue 14, point 7): every tool the real app lists,
 * called over HTTP with arbitrary arguments, never answers HTTP 500 or JSON-RPC -32603. What it
 * refuses, it refuses as a schema error (the published input schema says why; nothing audited,
 * nothing written) or as a typed refusal (a NORTH_ code; audited once; nothing written); what it
 * accepts answers in its published output schema.
 *
 * Runs are seeded (NORTH_FUZZ_SEED, default fixed) and bounded (NORTH_FUZZ_SCALE multiplies the
 * run counts); a failure prints the seed, the path and the shrunk counterexample.
 *
 * Each property and a mutation that turns it red (each tried once, killed, then reverted):
 * - per tool: the save handler throwing on a NUL in the answer (shrinks to
 *   `{question: "", answer: "\u0000"}`, -32603); a `.refine()` on question_id that the published
 *   JSON Schema cannot carry (schema and server disagree); `expected_version` as a bare
 *   `z.number()`; the runner auditing a refusal twice (tool-runner.ts).
 * - envelope: the tools/call handler registered with the SDK's `CallToolRequestSchema` again
 *   (`arguments` missing → -32603); `new Server` instead of `NorthServer` (a task-augmented
 *   request, or an initialize without protocolVersion → -32603).
 * - code points: `codePointLength` returning `value.length` (500 emoji refused).
 * - category samples: a sample filed under the wrong category.
 */

const { db, harness } = useTestApp();

/** Every tool the real app lists to a principal with every scope, and how many calls each gets. */
const TOOL_RUNS: Record<string, number> = {
  north__briefing: 40,
  north__memory_forget: 150,
  north__memory_held: 120,
  north__memory_recall: 150,
  north__memory_remember: 200,
  north__working_profile: 60,
  north__working_profile_answer: 220,
};

/** What each tool's calls must include, so a generator that stops reaching the handler shows. */
const REACHED: Record<string, string[]> = {
  north__briefing: ["read"],
  north__memory_forget: ["schema", "forgotten", "refused:NORTH_TARGET_MISSING"],
  north__memory_held: ["schema", "read", "refused:NORTH_SUBJECT_INVALID"],
  north__memory_recall: ["schema", "read", "refused:NORTH_SUBJECT_REQUIRED"],
  north__memory_remember: ["schema", "created", "refused:NORTH_SUBJECT_REQUIRED"],
  north__working_profile: ["schema", "read"],
  north__working_profile_answer: [
    "schema",
    "created",
    "updated",
    "refused:NORTH_CONFLICT",
    "refused:NORTH_ID_INVALID",
  ],
};

const MCP_HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
};

interface PublishedTool {
  name: string;
  inputSchema: ObjectJsonSchema;
  outputSchema: Record<string, unknown>;
}

interface JsonRpcReply {
  id?: unknown;
  result?: {
    content?: { type: string; text?: string }[];
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
  };
  error?: { code: number; message: string };
}

interface Exchange {
  status: number;
  requestId: string | null;
  reply: JsonRpcReply | undefined;
  raw: string;
}

const validator = new AjvJsonSchemaValidator();
let ws: Workspace;
let tokens: { member: string; manager: string };
let tools: PublishedTool[];
let inputValid: Map<string, (value: unknown) => boolean>;
let outputValid: Map<string, (value: unknown) => boolean>;
let domain: FieldDomain;

async function post(token: string, body: string): Promise<Exchange> {
  const response = await harness.request("/mcp", {
    method: "POST",
    token,
    headers: MCP_HEADERS,
    body,
  });
  const raw = await response.text();
  let reply: JsonRpcReply | undefined;
  try {
    reply = raw ? (JSON.parse(raw) as JsonRpcReply) : undefined;
  } catch {
    reply = undefined;
  }
  return { status: response.status, requestId: response.headers.get("x-request-id"), reply, raw };
}

/** Audit rows written for one HTTP request: one per call that reached a handler. */
async function auditedRows(requestId: string | null): Promise<number> {
  if (!requestId) return -1;
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from audit_events where request_id = ${requestId}`;
  return row?.n ?? -1;
}

/** Everything a tool call could have written in the workspace, as one comparable value. */
async function workspaceState(): Promise<string> {
  const [row] = await db.owner.client<{ state: string }[]>`
    select concat_ws('|',
      (select count(*) from working_profile_answers where organization_id = ${ws.organizationId}),
      (select coalesce(sum(version), 0) from working_profile_answers
        where organization_id = ${ws.organizationId}),
      (select max(updated_at)::text from working_profile_answers
        where organization_id = ${ws.organizationId}),
      (select count(*) from memories where organization_id = ${ws.organizationId}),
      (select count(forgotten_at) from memories where organization_id = ${ws.organizationId}),
      (select count(superseded_by) from memories where organization_id = ${ws.organizationId})
    ) as state`;
  return row?.state ?? "";
}

/** Error-level log lines written since `mark` (pino level 50 and above). */
function errorLogsSince(mark: number): string[] {
  return harness.logs.slice(mark).filter((line) => {
    try {
      return (JSON.parse(line) as { level: number }).level >= 50;
    } catch {
      return true;
    }
  });
}

const textOf = (reply: JsonRpcReply | undefined) => reply?.result?.content?.[0]?.text ?? "";

/**
 * What a tools/call result is, checked against SPEC: "schema" (invalid arguments), "refused:CODE"
 * (a typed refusal) or the outcome of an accepted call. Throws when it is none of these.
 */
function classifyResult(tool: string, reply: JsonRpcReply): string {
  const result = reply.result;
  expect(result, "a result").toBeDefined();
  if (!result) return "none";
  const text = textOf(reply);
  expect(Array.isArray(result.content) && result.content.length > 0, "content").toBe(true);
  if (text.startsWith(`Invalid arguments for ${tool}: `)) {
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    return "schema";
  }
  const structured = result.structuredContent;
  if (result.isError) {
    const code = structured?.code ?? /^rejected: (NORTH_[A-Z_]+)\. /.exec(text)?.[1];
    expect(code, `a typed refusal, got: ${text.slice(0, 200)}`).toMatch(/^NORTH_[A-Z_]+$/);
    if (structured) {
      expect(outputValid.get(tool)?.(structured), "receipt in the output schema").toBe(true);
      expect(["rejected", "conflict"]).toContain(structured.outcome);
      expect(structured.outcome === "conflict").toBe(code === "NORTH_CONFLICT");
      expect(text).toContain(String(code));
    }
    return `refused:${code}`;
  }
  expect(structured, "structured content").toBeDefined();
  expect(outputValid.get(tool)?.(structured), "output schema").toBe(true);
  return typeof structured?.outcome === "string" ? structured.outcome : "read";
}

async function seed(client: Client): Promise<{ questionIds: string[]; memoryIds: string[] }> {
  const questionIds: string[] = [];
  for (const [question, answer, question_id] of [
    ["How do you like drafts?", "Short, with a summary first.", "drafting-style"],
    ["Which matter is this about?", "Acme v. Dubois.", "ctx-a"],
    ["Anything else I should know?", "Fridays are short.", undefined],
  ] as const) {
    const saved = await saveAnswer(client, { question, answer, question_id });
    questionIds.push(saved.receipt.question_id ?? "");
  }
  const memoryIds: string[] = [];
  for (const args of [
    {
      kind: "fact",
      body: "Filings in the commercial court go through the e-filing portal.",
      origin: "stated",
    },
    {
      kind: "observation",
      body: "Prefers a call before noon.",
      origin: "stated",
      subject_type: "client",
      subject_id: "Hélène Dubois",
    },
    {
      kind: "fact",
      body: "The contrat de bail commercial was signed in 2023.",
      origin: "inferred",
      subject_type: "client",
      subject_id: "Acme SAS",
    },
  ] as const) {
    const stored = await remember(client, args);
    memoryIds.push(String(stored.structured?.memory_id));
  }
  return { questionIds, memoryIds };
}

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
  tokens = {
    member: harness.tokenFor(ws.member),
    manager: harness.tokenFor(ws.manager, { role: "manager" }),
  };
  const listed = await post(tokens.member, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  tools = (listed.reply?.result as unknown as { tools?: PublishedTool[] } | undefined)?.tools ?? [];
  inputValid = new Map(
    tools.map((t) => {
      const check = validator.getValidator(t.inputSchema as never);
      return [t.name, (value: unknown) => check(value).valid];
    }),
  );
  outputValid = new Map(
    tools.map((t) => {
      const check = validator.getValidator(t.outputSchema as never);
      return [t.name, (value: unknown) => check(value).valid];
    }),
  );
  // SPEC §5a: an open matter, and a restricted one the fuzzed member is not on the team of.
  await withOrganization(db.owner.db, ws.organizationId, async (tx) => {
    for (const [reference, access] of [
      ["FUZZ-OPEN", "open"],
      ["FUZZ/R-1", "restricted"],
    ] as const) {
      await createMatter(tx, {
        organizationId: ws.organizationId,
        reference,
        name: reference,
        access,
      });
    }
  });
  const managerClient = await harness.connect(ws.manager, { role: "manager" });
  await remember(managerClient, {
    kind: "observation",
    body: "Her counsel answers within a day.",
    origin: "stated",
    subject_type: "client",
    subject_id: "Hélène Dubois",
  });
  const seeded = await seed(await harness.connect(ws.member));
  domain = {
    question: fc.constantFrom("How do you like drafts?", "Which matter is this about?", "Q?"),
    answer: fc.constantFrom("Short, with a summary first.", "Fridays are short.", "I don't know."),
    body: fc.constantFrom(
      "The commercial court closes its registry at five.",
      "Prefers a call before noon.",
      "Signs with a blue pen.",
    ),
    question_id: fc.constantFrom(
      ...seeded.questionIds,
      "research-sources",
      "ctx-b",
      autoQuestionId("a question nobody asked"),
      "AUTO:abc",
      "auto:",
      "-bad",
      "a b",
      "a".repeat(128),
      "a".repeat(129),
      "\u00e9t\u00e9",
    ),
    expected_version: fc.integer({ min: 1, max: 3 }),
    subject_type: fc.constantFrom(
      "client",
      "person",
      "court",
      "Client",
      " client ",
      "c".repeat(32),
      "c".repeat(33),
      "1client",
      "client type",
    ),
    subject_id: fc.constantFrom(
      "Hélène Dubois",
      "helene  DUBOIS",
      "HE\u0301LE\u0300NE DUBOIS",
      "Acme SAS",
      "x".repeat(200),
      "x".repeat(201),
    ),
    memory_id: fc.constantFrom(...seeded.memoryIds),
    supersedes: fc.array(fc.constantFrom(...seeded.memoryIds), { maxLength: 2 }),
    "supersedes[]": fc.constantFrom(...seeded.memoryIds),
    expires_in_days: fc.integer({ min: 1, max: 365 }),
    limit: fc.integer({ min: 1, max: 20 }),
    conversation_id: fc.constantFrom("conv-1", "c:1.2_3", "-bad", "x".repeat(128), "x".repeat(129)),
    query: fc.constantFrom("contrat", "bail commercial", "Dubois", "a & b", "contrat:*", "'"),
    matter: fc.constantFrom(
      "FUZZ-OPEN",
      "fuzz-open",
      "FUZZ/R-1",
      "NO-SUCH-1",
      "bad ref!",
      "",
      "x".repeat(64),
      "x".repeat(65),
      "x".repeat(201),
    ),
  };
});

describe("fuzzing every tool through the real app", () => {
  it("publishes samples of every Unicode general category that really are in it", () => {
    for (const [category, samples] of Object.entries(CATEGORY_SAMPLES)) {
      const pattern = new RegExp(`^\\p{gc=${category}}$`, "u");
      for (const sample of samples)
        expect(pattern.test(sample), `${category} ${sample}`).toBe(true);
    }
  });

  it("lists exactly the tools this suite fuzzes", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(TOOL_RUNS).sort());
  });

  it.each(Object.keys(TOOL_RUNS))(
    "answers %s's arbitrary arguments with a result in schema, a schema error or a typed refusal, never a 500 or -32603",
    async (name) => {
      const tool = tools.find((t) => t.name === name);
      if (!tool) throw new Error(`${name} is not listed`);
      const kinds = new Map<string, number>();
      const call = fc.record({
        args: argumentsFor(tool.inputSchema, domain),
        as: fc.constantFrom<"member" | "manager">("member", "member", "manager"),
      });
      await fc.assert(
        fc.asyncProperty(call, async ({ args, as }) => {
          const argsText = toJsonText(args);
          const received = JSON.parse(argsText) as unknown;
          const before = await workspaceState();
          const mark = harness.logs.length;
          const exchange = await post(
            tokens[as],
            `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":${argsText}}}`,
          );
          expect(exchange.status, exchange.raw.slice(0, 300)).toBe(200);
          expect(exchange.reply?.error, exchange.raw.slice(0, 300)).toBeUndefined();
          expect(exchange.reply?.id).toBe(7);
          const kind = classifyResult(name, exchange.reply ?? {});
          const audited = await auditedRows(exchange.requestId);
          const after = await workspaceState();
          expect(errorLogsSince(mark)).toEqual([]);
          // The published input schema decides exactly which calls are schema errors.
          expect(kind === "schema", "schema error iff the input schema refuses").toBe(
            !inputValid.get(name)?.(received),
          );
          // A schema error never reaches the handler; every other call is audited exactly once.
          expect(audited).toBe(kind === "schema" ? 0 : 1);
          // A refusal of either kind writes nothing.
          if (kind === "schema" || kind.startsWith("refused:")) expect(after).toBe(before);
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }),
        fuzzParams(TOOL_RUNS[name] ?? 0),
      );
      console.info(`${name} outcomes:`, JSON.stringify(Object.fromEntries(kinds)));
      // The generators reach past the schema and into the handler, to its outcomes.
      for (const kind of REACHED[name] ?? []) expect([...kinds.keys()], kind).toContain(kind);
    },
  );

  it("answers a malformed call envelope with -32602 or a 400 parse error, never a 500 or -32603", async () => {
    const toolNames = tools.map((t) => t.name);
    const argumentsOfSomeTool = fc
      .constantFrom(...tools)
      .chain((t) => argumentsFor(t.inputSchema, domain));
    /** Params for `method`: mostly its own fields (some of the wrong type), sometimes anything. */
    const paramsFor = (method: string): fc.Arbitrary<unknown> => {
      if (method === "initialize") {
        return fc.oneof(
          { weight: 1, arbitrary: anyJson },
          {
            weight: 6,
            arbitrary: fc.record(
              {
                protocolVersion: fc.oneof(
                  fc.constantFrom("2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"),
                  hostileString,
                  anyJson,
                ),
                capabilities: fc.oneof(fc.constant({}), anyJson),
                clientInfo: fc.oneof(
                  fc.record({ name: hostileString, version: fc.constantFrom("1", "") }),
                  anyJson,
                ),
              },
              { requiredKeys: [] },
            ),
          },
        );
      }
      const names = method === "prompts/get" ? ["onboard"] : toolNames;
      return fc.oneof(
        { weight: 1, arbitrary: anyJson },
        {
          weight: 6,
          arbitrary: fc
            .tuple(
              fc.record(
                {
                  name: fc.oneof(
                    { weight: 6, arbitrary: fc.constantFrom(...names) },
                    { weight: 1, arbitrary: hostileString },
                    { weight: 1, arbitrary: anyJson },
                  ),
                  arguments: fc.oneof(
                    {
                      weight: 3,
                      arbitrary:
                        method === "prompts/get"
                          ? fc.record(
                              { locale: fc.constantFrom("en", "fr", "de") },
                              { requiredKeys: [] },
                            )
                          : argumentsOfSomeTool,
                    },
                    { weight: 1, arbitrary: anyJson },
                  ),
                },
                { requiredKeys: [] },
              ),
              // The protocol's own optional fields, now and then, of any shape.
              fc.oneof(
                { weight: 4, arbitrary: fc.constant(undefined) },
                {
                  weight: 1,
                  arbitrary: fc.record(
                    {
                      _meta: fc.oneof(
                        fc.record({ progressToken: anyJson }, { requiredKeys: [] }),
                        anyJson,
                      ),
                      task: fc.oneof(fc.record({ ttl: anyJson }, { requiredKeys: [] }), anyJson),
                      cursor: fc.oneof(hostileString, anyJson),
                    },
                    { requiredKeys: [] },
                  ),
                },
              ),
              fc.option(extraFields, { nil: undefined }),
            )
            .map(([known, protocol, extras]) => ({ ...extras, ...protocol, ...known })),
        },
      );
    };
    const message = fc
      .constantFrom(
        "tools/call",
        "tools/call",
        "prompts/get",
        "tools/list",
        "prompts/list",
        "initialize",
      )
      .chain((method) =>
        fc.record(
          {
            jsonrpc: fc.oneof(
              { weight: 9, arbitrary: fc.constant("2.0") },
              { weight: 1, arbitrary: anyJson },
            ),
            id: fc.oneof(
              { weight: 8, arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })) },
              { weight: 1, arbitrary: anyJson },
            ),
            method: fc.constant(method),
            params: paramsFor(method),
          },
          { requiredKeys: ["jsonrpc", "method", "id"] },
        ),
      );
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(message, async (sent) => {
        const text = toJsonText(sent);
        const received = JSON.parse(text) as unknown;
        const before = await workspaceState();
        const mark = harness.logs.length;
        const exchange = await post(tokens.member, text);
        const after = await workspaceState();
        expect(exchange.status, exchange.raw.slice(0, 300)).not.toBe(500);
        expect(errorLogsSince(mark)).toEqual([]);
        let kind: string;
        if (!JSONRPCMessageSchema.safeParse(received).success) {
          // Not a JSON-RPC message at all: the transport refuses it before any server runs.
          expect(exchange.status).toBe(400);
          expect(exchange.reply?.error?.code).toBe(-32700);
          kind = "not-json-rpc";
        } else if (!isJSONRPCRequest(received)) {
          // Without a usable id it is a notification: accepted, never answered, never run.
          expect(exchange.status).toBe(202);
          kind = "notification";
        } else {
          expect(exchange.status, exchange.raw.slice(0, 300)).toBe(200);
          expect(JSON.stringify(exchange.reply?.id)).toBe(JSON.stringify(received.id));
          if (exchange.reply?.error) {
            expect(exchange.reply.error.code, exchange.reply.error.message).toBe(-32602);
            kind = "invalid-params";
          } else if (received.method === "tools/call") {
            kind = `tool:${classifyResult(String(received.params?.name), exchange.reply ?? {})}`;
          } else {
            expect(exchange.reply?.result).toBeDefined();
            kind = `${received.method}:ok`;
          }
        }
        const audited = await auditedRows(exchange.requestId);
        if (!kind.startsWith("tool:") || kind === "tool:schema") {
          expect(audited).toBe(0);
          expect(after).toBe(before);
        } else {
          expect(audited).toBe(1);
        }
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
      }),
      fuzzParams(400),
    );
    for (const kind of [
      "not-json-rpc",
      "invalid-params",
      "tool:schema",
      "prompts/get:ok",
      "initialize:ok",
    ]) {
      expect([...seen.keys()], kind).toContain(kind);
    }
    console.info("envelope outcomes:", JSON.stringify(Object.fromEntries(seen)));
  });

  it("counts the question's 500-character bound in code points, whatever the characters", async () => {
    const client = await harness.connect(ws.member);
    // Characters sanitizing leaves alone: one code point each, one or two UTF-16 units.
    const unit = fc.constantFrom("a", "\u00e9", "\u4e2d", "\u{1f600}", "\u{20000}", "\u05d0");
    await fc.assert(
      fc.asyncProperty(fc.array(unit, { minLength: 495, maxLength: 505 }), async (chars) => {
        const question = chars.join("");
        const saved = await saveAnswer(client, { question, answer: "Yes." });
        if (chars.length <= 500) {
          expect(["created", "noop"]).toContain(saved.receipt.outcome);
        } else {
          expect(saved.receipt.outcome).toBe("rejected");
          expect(saved.receipt.code).toBe("NORTH_QUESTION_TOO_LONG");
        }
      }),
      fuzzParams(30),
    );
  });

  describe("what fuzzing found, as examples", () => {
    it("answers tools/call with non-object arguments or a non-string name with -32602, not -32603", async () => {
      for (const params of [
        { name: "north__working_profile_answer", arguments: [] },
        { name: "north__working_profile_answer", arguments: "question" },
        { name: "north__memory_recall", arguments: null },
        { name: 5, arguments: {} },
        {},
      ]) {
        const before = await workspaceState();
        const exchange = await post(
          tokens.member,
          JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params }),
        );
        expect(exchange.status).toBe(200);
        expect(exchange.reply?.error?.code, JSON.stringify(params)).toBe(-32602);
        expect(await auditedRows(exchange.requestId)).toBe(0);
        expect(await workspaceState()).toBe(before);
      }
    });

    it("answers an initialize whose params do not parse with -32602, not -32603", async () => {
      for (const params of [{}, { protocolVersion: 5 }, { protocolVersion: "2025-06-18" }]) {
        const exchange = await post(
          tokens.member,
          JSON.stringify({ jsonrpc: "2.0", id: 5, method: "initialize", params }),
        );
        expect(exchange.status).toBe(200);
        expect(exchange.reply?.error?.code, JSON.stringify(params)).toBe(-32602);
      }
    });

    it("runs a task-augmented call as a plain call, since North offers no tasks", async () => {
      const question = `Task-augmented ${Date.now()}?`;
      const exchange = await post(
        tokens.member,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 4,
          method: "tools/call",
          params: {
            name: "north__working_profile_answer",
            arguments: { question, answer: "Yes." },
            task: { ttl: 60_000 },
          },
        }),
      );
      expect(exchange.reply?.error).toBeUndefined();
      expect(exchange.reply?.result?.structuredContent?.outcome).toBe("created");
      expect(await auditedRows(exchange.requestId)).toBe(1);
      const rows = await db.owner.client`
        select 1 from working_profile_answers where question_text = ${question}`;
      expect(rows).toHaveLength(1);
    });
  });
});
