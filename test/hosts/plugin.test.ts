/**
 * Issue 22, point 5 (SPEC §3b): the Claude Code / Cowork plugin `north`, installed from the
 * repository's marketplace with the real Claude Code CLI (2.1.197) in a private HOME, as a lawyer
 * would: `claude plugin marketplace add <repository>`, `claude plugin install north@north`.
 * North is `north serve` on a local port; the plugin's `.mcp.json` finds it through the
 * environment (`NORTH_URL`, and `NORTH_TOKEN` when the lawyer holds a token). Then
 * `claude -p "/north:onboard"` against the Messages API stand-in, which records what the model
 * receives and, scripted, makes one call to a North tool.
 *
 * Claude Code 2.1.197 names the plugin's server `plugin:north:north` (`claude mcp list`) and its
 * tools `mcp__plugin_north_north__<tool>`.
 *
 * Each step runs once, in whichever check needs it first, so each check also runs alone (the
 * acceptance-mutation runner runs one check at a time).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { onboardingPromptText } from "@north/agent-runtime";
import { createApiToken } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ONBOARD_COMMAND, onboardCommand } from "../../scripts/build-plugin.ts";
import { type ClaudeCode, type ClaudeRun, startClaudeCode } from "../support/claude-code.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import {
  type MessagesApi,
  type MessagesRequest,
  type SeenToolResult,
  startMessagesApi,
} from "../support/messages-api.ts";
import { ROOT } from "../support/processes.ts";
import { type ServeProcess, spawnServe } from "../support/serve-process.ts";

/** The prefix Claude Code gives the tools of the plugin `north`'s server `north`. */
const PLUGIN_TOOLS = "mcp__plugin_north_north__";
const PROFILE_TOOL = `${PLUGIN_TOOLS}north__working_profile`;

let db: TestDatabase;
let north: ServeProcess;
let messages: MessagesApi;
let token: string;
const claudes: ClaudeCode[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const ws = await createWorkspace(db.owner.db);
  ({ token } = await createApiToken(db.owner.db, {
    ...ws.member,
    scopes: ["profile:write", "memory:read", "memory:write"],
    expiresAt: null,
  }));
  north = await spawnServe(db.appUrl, { NORTH_DB_POOLER: db.pooler });
  messages = await startMessagesApi();
});
afterAll(async () => {
  for (const claude of claudes) await claude.close();
  await messages?.close();
  await north?.interrupt();
  await db?.drop();
});

/** A lawyer's Claude Code with the plugin installed from the repository's marketplace. */
interface Installed {
  claude: ClaudeCode;
  added: ClaudeRun;
  installed: ClaudeRun;
  list: ClaudeRun;
}

async function install(env: Record<string, string>): Promise<Installed> {
  const claude = await startClaudeCode({ messagesApi: messages.url, env });
  claudes.push(claude);
  const added = await claude.run(["plugin", "marketplace", "add", ROOT]);
  const installed = await claude.run(["plugin", "install", "north@north"]);
  const list = await claude.run(["plugin", "list"]);
  return { claude, added, installed, list };
}

let withToken: Promise<Installed> | null = null;
/** Installed for a lawyer who holds an API token. */
const lawyerWithToken = () => {
  withToken ??= install({ NORTH_URL: north.base, NORTH_TOKEN: token });
  return withToken;
};

/** What `claude -p "/north:onboard"` sent the model, and what North's tool answered. */
interface Onboarded {
  run: ClaudeRun;
  first: MessagesRequest;
  results: SeenToolResult[];
}
let onboarding: Promise<Onboarded> | null = null;

/**
 * `claude -p "/north:onboard"`, the North tools allowed by server (as the README tells lawyers
 * to). The stand-in model, offered the profile tool, reads the profile once as the prompt asks,
 * then answers.
 */
function onboarded(): Promise<Onboarded> {
  onboarding ??= (async () => {
    const { claude } = await lawyerWithToken();
    const from = messages.requests.length;
    const results: SeenToolResult[] = [];
    messages.respond((request, seen) => {
      results.push(...seen);
      const offered = (request.tools ?? []).some((tool) => tool.name === PROFILE_TOOL);
      if (!offered || seen.length > 0) return [{ type: "text", text: "Shall we begin?" }];
      return [
        { type: "tool_use", id: "", name: PROFILE_TOOL, input: { view: "next", locale: "en" } },
      ];
    });
    try {
      const run = await claude.run(
        ["-p", "/north:onboard", "--allowedTools", "mcp__plugin_north_north"],
        90_000,
      );
      const first = messages.requests[from];
      if (!first) throw new Error(`the model was never asked:\n${run.stdout}\n${run.stderr}`);
      return { run, first, results };
    } finally {
      messages.respond(null);
    }
  })();
  return onboarding;
}

/** The text blocks of a request's first user message, in order. */
function firstUserTexts(request: MessagesRequest): string[] {
  const message = request.messages?.find((m) => m.role === "user");
  if (!message) return [];
  if (typeof message.content === "string") return [message.content];
  return (message.content as { type: string; text?: string }[])
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "");
}

describe("The north plugin", () => {
  it("ships /north:onboard as agent-runtime's onboarding prompt, regenerated by bun run build", async () => {
    const committed = await readFile(path.join(ROOT, ONBOARD_COMMAND), "utf8");
    expect(committed, "run bun run build and commit the command").toBe(onboardCommand());
    const scripts = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")).scripts;
    expect(scripts.build).toContain("scripts/build-plugin.ts");
  });

  it("passes claude plugin validate --strict, its marketplace and the plugin", async () => {
    const { claude } = await lawyerWithToken();
    for (const target of [ROOT, path.join(ROOT, "plugins/north")]) {
      const validated = await claude.run(["plugin", "validate", "--strict", target]);
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    }
  });

  it("installs from the repository: claude plugin marketplace add, then claude plugin install north@north", async () => {
    const { added, installed, list } = await lawyerWithToken();
    expect(added.code, added.stdout + added.stderr).toBe(0);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    expect(list.stdout).toMatch(/north@north[\s\S]*enabled/);
  });

  it("leaves sign-in to OAuth when the lawyer holds no token: North needs authentication, not a broken header", async () => {
    const { claude } = await install({ NORTH_URL: north.base });
    const listed = await claude.run(["mcp", "list"]);
    const line = listed.stdout.split("\n").find((l) => l.startsWith("plugin:north:north"));
    expect(line, listed.stdout).toContain(`${north.base}/mcp`);
    expect(line).toMatch(/needs authentication/i);
  });

  describe("/north:onboard in claude -p", () => {
    it("sends the onboarding prompt as the lawyer's first message", async () => {
      const { first } = await onboarded();
      const texts = firstUserTexts(first);
      expect(texts.join("\n")).toContain("<command-name>/north:onboard</command-name>");
      expect(texts.map((text) => text.trim())).toContain(onboardingPromptText("en").trim());
    });

    it("offers the model every North tool the prompt names, through the plugin's server north", async () => {
      const { first } = await onboarded();
      const offered = (first.tools ?? []).map((tool) => tool.name);
      const named = [...new Set(onboardingPromptText("en").match(/\bnorth__\w+/g) ?? [])];
      expect(named.length).toBeGreaterThan(0);
      for (const tool of named) expect(offered).toContain(`${PLUGIN_TOOLS}${tool}`);
    });

    it("reaches North at NORTH_URL with NORTH_TOKEN: the profile read the prompt asks for answers", async () => {
      const { results, run } = await onboarded();
      const read = results.find((result) => result.toolName === PROFILE_TOOL);
      expect(read, `${run.stdout}\n${run.stderr}`).toBeDefined();
      expect(read?.isError).toBe(false);
      expect(north.stderr() + north.stdout()).toContain('"tool":"north__working_profile"');
    });
  });
});
