/**
 * Issue 22, point 6 (SPEC §3b): North's Claude Desktop extension. The test builds
 * `north.mcpb` as `bun run build:mcpb` does (into a temporary folder, leaving dist/ alone),
 * unpacks it with the pinned `mcpb` CLI into a folder with no node_modules anywhere above it,
 * substitutes its `mcp_config` with `getMcpConfigForManifest` — the function of
 * `@anthropic-ai/mcpb` that turns a manifest and the settings a user entered into the command a
 * host runs (`${__dirname}`, `${user_config.…}`, defaults) — and drives that command over stdio
 * with the SDK client, as the member whose token was entered, against a test database.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { getMcpConfigForManifest, type McpbManifestAny } from "@anthropic-ai/mcpb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createApiToken } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMcpb } from "../../scripts/build-mcpb.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import { ROOT } from "../support/processes.ts";

const MCPB = path.join(ROOT, "node_modules/.bin/mcpb");
const run = promisify(execFile);

let db: TestDatabase;
let work: string;
let unpacked: string;
let manifest: McpbManifestAny;
let token: string;
let member: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const ws = await createWorkspace(db.owner.db);
  member = ws.member.userId;
  ({ token } = await createApiToken(db.owner.db, {
    ...ws.member,
    scopes: ["profile:write", "memory:read", "memory:write"],
    expiresAt: null,
  }));
  work = await mkdtemp(path.join(tmpdir(), "north-extension-"));
  const bundle = await buildMcpb(path.join(work, "north.mcpb"));
  unpacked = path.join(work, "unpacked");
  await run(MCPB, ["unpack", bundle, unpacked]);
  manifest = JSON.parse(await readFile(path.join(unpacked, "manifest.json"), "utf8"));
}, 120_000);
afterAll(async () => {
  await clients.splice(0).reduce((done, c) => done.then(() => c.close()), Promise.resolve());
  if (work) await rm(work, { recursive: true, force: true });
  await db?.drop();
});

const clients: Client[] = [];
let connecting: Promise<Client> | null = null;

/**
 * What a lawyer enters when installing the extension: their token and the firm's database
 * settings (the app login role straight to PostgreSQL: the extension has no pooler setting).
 * The optional maintenance URL is left empty, as most will.
 */
const settings = () => ({
  north_token: token,
  database_app_url: db.directAppUrl,
  audit_key: randomBytes(16).toString("hex"),
});

/** The extension's server, started the way Claude Desktop starts it, once for the file. */
function extensionClient(): Promise<Client> {
  connecting ??= (async () => {
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: unpacked,
      systemDirs: { HOME: work },
      userConfig: settings(),
      pathSeparator: path.sep,
    });
    if (!config) throw new Error("getMcpConfigForManifest found settings missing");
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      // A host passes the manifest's environment, not the developer's shell.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, ...config.env },
      cwd: work,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d) => {
      stderr += d;
    });
    // SDK v1's client on purpose, whatever NORTH_TEST_MCP_CLIENT says: the stand-in is Claude
    // Desktop as it ships, on the 2025 handshake; the bundle at 2026-07-28 is operator.e2e's.
    const client = new Client({ name: "claude-desktop-stand-in", version: "0" });
    try {
      await client.connect(transport);
    } catch (error) {
      throw new Error(
        `the extension's server did not start: ${(error as Error).message}\n${stderr}`,
      );
    }
    clients.push(client);
    return client;
  })();
  return connecting;
}

describe("North's Claude Desktop extension (bun run build:mcpb)", () => {
  it("packs a manifest mcpb validates: MCPB 0.3, a node server whose entry point is in the bundle", async () => {
    const validated = await run(MCPB, ["validate", path.join(unpacked, "manifest.json")]);
    expect(validated.stdout).toMatch(/validation passes/i);
    expect(manifest.manifest_version).toBe("0.3");
    expect(manifest.server.type).toBe("node");
    await access(path.join(unpacked, manifest.server.entry_point));
    expect(manifest.server.mcp_config.args).toEqual([
      `\${__dirname}/${manifest.server.entry_point}`,
      "serve",
      "--stdio",
    ]);
  });

  it("asks for the token and the database secrets as sensitive settings, each one mapped into the server's environment", () => {
    const options = manifest.user_config ?? {};
    const env = manifest.server.mcp_config.env ?? {};
    const fromSetting = (variable: string) =>
      env[variable]?.match(/^\$\{user_config\.(\w+)\}$/)?.[1];
    for (const variable of ["NORTH_TOKEN", "DATABASE_APP_URL", "NORTH_AUDIT_KEY"]) {
      const key = fromSetting(variable);
      expect(key, `${variable} comes from a setting`).toBeDefined();
      expect(options[key as string], variable).toMatchObject({ sensitive: true, required: true });
    }
    // A lawyer's desktop never holds the firm's secret key: stdio runs no sign-in.
    expect(env).not.toHaveProperty("NORTH_SECRET_KEY");
    // Every setting the environment names is declared (an undeclared one reaches the server as
    // the literal text `${user_config.…}`).
    for (const variable of Object.keys(env)) {
      const key = fromSetting(variable);
      if (key) expect(Object.keys(options), variable).toContain(key);
    }
  });

  it("runs its mcp_config over stdio from the unpacked bundle alone (no node_modules): North lists its tools", async () => {
    const client = await extensionClient();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(["north__working_profile", "north__working_profile_answer"]),
    );
  });

  it("saves and reads the member's working profile as the token's member", async () => {
    const client = await extensionClient();
    const answer = `Through the desktop extension ${randomBytes(4).toString("hex")}.`;
    const saved = await client.callTool({
      name: "north__working_profile_answer",
      arguments: { question: "How should drafts reach you?", answer },
    });
    expect(saved.isError ?? false, JSON.stringify(saved.content)).toBe(false);
    const read = await client.callTool({ name: "north__working_profile", arguments: {} });
    expect(read.isError ?? false, JSON.stringify(read.content)).toBe(false);
    expect(JSON.stringify(read.structuredContent)).toContain(answer);
    const rows = await db.owner.client<{ owner: string }[]>`
      select owner_user_id as owner from working_profile_answers where answer = ${answer}`;
    expect(rows.map((r) => r.owner)).toEqual([member]);
  });
});
