/**
 * Issue 22, point 1 (SPEC §3b): what the real Claude Code CLI (2.1.197) delivers to the model
 * from North. One `north serve`, added to Claude Code as the README says (`claude mcp add
 * --transport http … --header "Authorization: Bearer …"`, a manager's token with every scope,
 * so every tool is offered), and a few `claude -p` runs against the Messages API stand-in,
 * which records every request: the checks read what the model would have read.
 *
 * What 2.1.197 does, read from its bundle and seen with a tiny SDK server: server instructions
 * land in the conversation under "# MCP Server Instructions" then "## <server>", and
 * instructions or a tool description over 2,048 characters are cut there and end with
 * "… [truncated]"; a result with structuredContent reaches the model as that JSON only; a
 * result over 50,000 characters (the smaller of a tool's own cap and 50,000) is saved to a file
 * and the model gets a 2 KB `<persisted-output>` preview ("Output too large (…). Full output
 * saved to: …"), and one over 25,000 tokens by the count_tokens API gets an "exceeds maximum
 * allowed tokens. Output has been saved to" notice instead (seen: a 56.9 KB result was
 * saved, so the limit is 50,000 characters, not the 100,000 of the issue); a prompt is
 * typed `/mcp__<server>__<prompt>`, its positional words filling its arguments in order.
 *
 * Each CLI run happens once, in whichever check needs it first, so each check also runs alone
 * (the acceptance-mutation runner runs one check at a time).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  BRIEFING_TOOL,
  HELD_TOOL,
  MEMORY_FENCE_PREAMBLE,
  onboardingPromptText,
  PROFILE_FENCE_PREAMBLE,
  READ_TOOL,
  RECALL_TOOL,
  REMEMBER_TOOL,
  SAVE_TOOL,
} from "@north/agent-runtime";
import { createApiToken } from "@north/db";
import { SCOPES } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addNorth, type ClaudeCode, startClaudeCode } from "../support/claude-code.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import {
  type MessagesApi,
  type MessagesRequest,
  requestText,
  startMessagesApi,
  type ToolResultBlock,
  toolResultBlocks,
  toolResultText,
} from "../support/messages-api.ts";
import { connectClient, type ServeProcess, spawnServe } from "../support/serve-process.ts";

/** What Claude Code 2.1.197 appends to instructions or a description it cut at 2,048 characters. */
const TRUNCATION_MARKER = "\u2026 [truncated]";
const HOST_CUT = 2_048;
/** What it puts in place of a result it saved to a file (the two paths of 2.1.197). */
const SPILL_PHRASES = [
  "<persisted-output>",
  "Output too large (",
  "Full output saved to:",
  "exceeds maximum allowed tokens",
  "[OUTPUT TRUNCATED",
];
/** Above this many characters Claude Code 2.1.197 saves a result to a file. */
const HOST_RESULT_CHARS = 50_000;
/** Above this many tokens (by count_tokens) it does so whatever the characters. */
const HOST_RESULT_TOKENS = 25_000;
const PREFIX = "mcp__north__";
/** The Messages API's rule for a tool name. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

// Lawyer-written text the fences must hold: plain words, so they read the same in any JSON.
const PROFILE_ANSWER = "Lead with the risk then the fix sentinel profile 7Q4";
const MEMORY_BODY = "Prefers paper bundles before every hearing sentinel memory 9K2";
const SUBJECT = { subject_type: "client", subject_id: "Helene Dubois" };
const LARGE_ANSWERS = 15;
const LARGE_ANSWER_CHARS = 9_500;
const largeMarker = (i: number) => `LARGE-ANSWER-${String(i).padStart(2, "0")}-START`;

let db: TestDatabase;
let server: ServeProcess;
let messages: MessagesApi;
let claude: ClaudeCode;
let manager: Client;
let memberToken: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const ws = await createWorkspace(db.owner.db, "Delivery");
  const token = async (tenant: typeof ws.manager, scopes: readonly string[]) =>
    (await createApiToken(db.owner.db, { ...tenant, scopes: [...scopes], expiresAt: null })).token;
  const managerToken = await token(ws.manager, SCOPES);
  memberToken = await token(ws.member, ["profile:write", "memory:read", "memory:write"]);
  server = await spawnServe(db.appUrl, { NORTH_DB_POOLER: db.pooler });
  messages = await startMessagesApi();
  claude = await startClaudeCode({ messagesApi: messages.url });
  await addNorth(claude, server.url, ["--header", `Authorization: Bearer ${managerToken}`]);
  manager = await connectClient(server.url, managerToken);
});
afterAll(async () => {
  await manager?.close();
  await claude?.close();
  await messages?.close();
  await server?.interrupt();
  await db?.drop();
});

/** One `claude -p` run: the requests the model received and the tool results among them. */
interface Run {
  requests: MessagesRequest[];
  results: ToolResultBlock[];
}

/** Runs `claude -p` with `args`, North's tools allowed, and returns what the stand-in saw. */
async function runClaude(args: string[]): Promise<Run> {
  const requestsBefore = messages.requests.length;
  const run = await claude.run(["-p", ...args, "--allowedTools", "mcp__north"], 180_000);
  if (run.code !== 0) throw new Error(`claude -p failed (${run.code}): ${run.stdout}${run.stderr}`);
  const requests = messages.requests.slice(requestsBefore);
  return { requests, results: requests.flatMap(toolResultBlocks) };
}

/** A scripted model: calls `tools` (North's names) all at once, then answers when it has results. */
function callOnce(tools: { name: string; input: Record<string, unknown> }[]) {
  messages.respond((request, results) => {
    if (results.length > 0) return [{ type: "text", text: "Done." }];
    if (!request.tools?.some((tool) => tool.name === `${PREFIX}${BRIEFING_TOOL}`)) return undefined;
    return tools.map((tool) => ({
      type: "tool_use" as const,
      id: "",
      name: `${PREFIX}${tool.name}`,
      input: tool.input,
    }));
  });
}

let reading: Promise<Run> | null = null;
/**
 * The manager saves a profile answer and a memory through the SDK client, then one `claude -p`
 * in which the model calls the four tools that return lawyer-written text.
 */
function readRun(): Promise<Run> {
  reading ??= (async () => {
    const saved = await manager.callTool({
      name: SAVE_TOOL,
      arguments: { question: "How should a review open?", answer: PROFILE_ANSWER },
    });
    expect(saved.isError, JSON.stringify(saved)).toBeFalsy();
    const remembered = await manager.callTool({
      name: REMEMBER_TOOL,
      arguments: { kind: "observation", origin: "stated", body: MEMORY_BODY, ...SUBJECT },
    });
    expect(remembered.isError, JSON.stringify(remembered)).toBeFalsy();
    callOnce([
      { name: READ_TOOL, input: {} },
      { name: HELD_TOOL, input: { subject_id: SUBJECT.subject_id } },
      { name: BRIEFING_TOOL, input: {} },
      { name: RECALL_TOOL, input: { query: "paper bundles hearing" } },
    ]);
    try {
      return await runClaude(["Brief me, then tell me what you hold about Helene Dubois."]);
    } finally {
      messages.respond(null);
    }
  })();
  return reading;
}

let large: Promise<Run> | null = null;
/**
 * The member saves 15 answers of 9,500 characters, then one `claude -p` (North configured with
 * the member's token through `--mcp-config`) in which the model asks for the briefing and the
 * profile.
 */
function largeRun(): Promise<Run> {
  large ??= (async () => {
    const member = await connectClient(server.url, memberToken);
    try {
      for (let i = 1; i <= LARGE_ANSWERS; i++) {
        const head = `${largeMarker(i)} `;
        const answer =
          head +
          "plain words of a long answer ".repeat(400).slice(0, LARGE_ANSWER_CHARS - head.length);
        const saved = await member.callTool({
          name: SAVE_TOOL,
          arguments: { question: `Long question number ${i}?`, answer },
        });
        expect(saved.isError, JSON.stringify(saved)).toBeFalsy();
      }
    } finally {
      await member.close();
    }
    const config = path.join(claude.home, "member-mcp.json");
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          north: {
            type: "http",
            url: server.url,
            headers: { Authorization: `Bearer ${memberToken}` },
          },
        },
      }),
    );
    callOnce([
      { name: BRIEFING_TOOL, input: {} },
      { name: READ_TOOL, input: {} },
    ]);
    try {
      return await runClaude([
        "Brief me on how I work.",
        "--mcp-config",
        config,
        "--strict-mcp-config",
      ]);
    } finally {
      messages.respond(null);
    }
  })();
  return large;
}

const onboarding = new Map<string, Promise<Run>>();
/** `claude -p "/mcp__north__onboard …"`, once per prompt line; the model only answers text. */
function onboardRun(line: string): Promise<Run> {
  let run = onboarding.get(line);
  if (!run) {
    run = runClaude([line]);
    onboarding.set(line, run);
  }
  return run;
}

/** The first request of a run: the one that shows the system prompt and the tools. */
function firstRequest(run: Run): MessagesRequest {
  const [first] = run.requests;
  if (!first) throw new Error("the stand-in received no request");
  return first;
}

/** What the model received as the result of North's `tool` in this run. */
function resultOf(run: Run, tool: string): string {
  const found = run.results.filter((result) => result.toolName === `${PREFIX}${tool}`);
  expect(found, `results of ${tool}`).toHaveLength(1);
  const [result] = found as [ToolResultBlock];
  const text = toolResultText(result.content);
  expect(result.isError, text).toBe(false);
  return text;
}

/** `text` itself, or as it reads inside a JSON string (structuredContent). */
const inJson = (text: string) => JSON.stringify(text).slice(1, -1);
const indexIn = (haystack: string, needle: string, from = 0) => {
  const plain = haystack.indexOf(needle, from);
  return plain >= 0 ? plain : haystack.indexOf(inJson(needle), from);
};

/**
 * The first time the model reads `lawyerText` it is inside the fence `tag` (`<tag …>` …
 * `</tag>`), after the fence's data label: the fence comes first, any bare copy after it.
 */
function expectFencedFirst(text: string, lawyerText: string, tag: string, label: string) {
  const first = text.indexOf(lawyerText);
  expect(first, `${lawyerText} reaches the model`).toBeGreaterThanOrEqual(0);
  const open = text.lastIndexOf(`<${tag}`, first);
  expect(
    open,
    `no <${tag}> before the first "${lawyerText}" in:\n${text.slice(0, 3000)}`,
  ).toBeGreaterThanOrEqual(0);
  const close = text.indexOf(`</${tag}>`, open);
  expect(close, `the <${tag}> fence closes after "${lawyerText}"`).toBeGreaterThan(first);
  const labelAt = indexIn(text, label, open);
  expect(labelAt, `the <${tag}> fence is labelled`).toBeGreaterThan(open);
  expect(labelAt, `the <${tag}> label precedes the lawyer's text`).toBeLessThan(first);
}

/** A result the model reads whole: no file in its place, within the host's size. */
function expectWithinHost(text: string) {
  for (const phrase of SPILL_PHRASES) expect(text, text.slice(0, 500)).not.toContain(phrase);
  expect(text.length).toBeLessThan(HOST_RESULT_CHARS);
  expect(Math.ceil(text.length / 4)).toBeLessThan(HOST_RESULT_TOKENS);
}

describe("what Claude Code delivers to the model from North", () => {
  it("gives the model North's server instructions whole, under 2,000 characters", async () => {
    const served = manager.getInstructions() ?? "";
    expect(served.length).toBeGreaterThan(0);
    const seen = requestText(firstRequest(await readRun()));
    const heading = seen.indexOf("## north\n");
    expect(heading, "North's instructions are under their own heading").toBeGreaterThanOrEqual(0);
    const start = heading + "## north\n".length;
    const delivered = seen.slice(start, start + served.length + TRUNCATION_MARKER.length);
    expect(delivered.includes(TRUNCATION_MARKER), delivered.slice(-200)).toBe(false);
    expect(delivered.startsWith(served), "the instructions arrive as North serves them").toBe(true);
    expect(served.length).toBeLessThan(2_000);
  });

  it("offers every North tool with a name and input schema the Messages API accepts", async () => {
    const { tools } = await manager.listTools();
    const offered = (firstRequest(await readRun()).tools ?? []).filter((tool) =>
      tool.name.startsWith(PREFIX),
    );
    expect(offered.map((tool) => tool.name).sort()).toEqual(
      tools.map((tool) => `${PREFIX}${tool.name}`).sort(),
    );
    for (const tool of offered) {
      expect(tool.name).toMatch(TOOL_NAME);
      const schema = tool.input_schema ?? {};
      expect(schema.type, tool.name).toBe("object");
      for (const key of ["oneOf", "anyOf", "allOf", "not", "enum"]) {
        expect(Object.keys(schema), tool.name).not.toContain(key);
      }
    }
  });

  it("gives the model each tool's description whole, as North wrote it", async () => {
    const { tools } = await manager.listTools();
    const offered = firstRequest(await readRun()).tools ?? [];
    for (const tool of tools) {
      const seen = offered.find((candidate) => candidate.name === `${PREFIX}${tool.name}`);
      expect(seen?.description, tool.name).not.toContain(TRUNCATION_MARKER);
      expect(seen?.description, tool.name).toBe(tool.description);
      expect(tool.description?.length ?? 0, tool.name).toBeLessThanOrEqual(HOST_CUT);
    }
  });
});

describe("each result with lawyer-written text reaches the model fenced and labelled first", () => {
  it("north__working_profile", async () => {
    const text = resultOf(await readRun(), READ_TOOL);
    expectFencedFirst(text, PROFILE_ANSWER, "north-profile", PROFILE_FENCE_PREAMBLE);
  });

  it("north__memory_held", async () => {
    const text = resultOf(await readRun(), HELD_TOOL);
    expectFencedFirst(text, MEMORY_BODY, "north-memories", MEMORY_FENCE_PREAMBLE);
  });

  it("north__briefing", async () => {
    const text = resultOf(await readRun(), BRIEFING_TOOL);
    expectFencedFirst(text, PROFILE_ANSWER, "north-profile", PROFILE_FENCE_PREAMBLE);
    expectFencedFirst(text, MEMORY_BODY, "north-memories", MEMORY_FENCE_PREAMBLE);
  });

  it("north__memory_recall", async () => {
    const text = resultOf(await readRun(), RECALL_TOOL);
    expectFencedFirst(text, MEMORY_BODY, "north-memories", MEMORY_FENCE_PREAMBLE);
  });
});

describe("a large profile (15 answers of 9,500 characters) stays within Claude Code's limits", () => {
  it("the briefing reaches the model whole, once each, and says to read the rest with north__working_profile", async () => {
    const text = resultOf(await largeRun(), BRIEFING_TOOL);
    expectWithinHost(text);
    expectFencedFirst(text, largeMarker(1), "north-profile", PROFILE_FENCE_PREAMBLE);
    for (let i = 1; i <= LARGE_ANSWERS; i++) {
      expect(text.split(largeMarker(i)).length - 1, largeMarker(i)).toBeLessThanOrEqual(1);
    }
    expect(text).toContain(READ_TOOL);
  });

  it("north__working_profile reaches the model whole and names the cursor that reads the rest", async () => {
    const text = resultOf(await largeRun(), READ_TOOL);
    expectWithinHost(text);
    expectFencedFirst(text, largeMarker(1), "north-profile", PROFILE_FENCE_PREAMBLE);
    expect(text).toContain("cursor");
  });
});

describe("the onboard prompt expands in `claude -p`", () => {
  /** The user turn Claude Code built from the command: everything the user said, in order. */
  const userText = (request: MessagesRequest) =>
    requestText({
      messages: (request.messages ?? []).filter((message) => message.role === "user"),
    });

  it("as /mcp__north__onboard, into North's onboarding prompt", async () => {
    const first = firstRequest(await onboardRun("/mcp__north__onboard"));
    expect(userText(first)).toContain("<command-name>/mcp__north__onboard</command-name>");
    expect(userText(first)).toContain(onboardingPromptText("en"));
  });

  it("with its locale argument, /mcp__north__onboard fr, into the French prompt", async () => {
    const first = firstRequest(await onboardRun("/mcp__north__onboard fr"));
    expect(userText(first)).toContain(onboardingPromptText("fr"));
    expect(userText(first)).not.toContain(onboardingPromptText("en"));
  });
});
