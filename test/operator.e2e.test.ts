import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { freePort } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { connectClient } from "./support/mcp-client.ts";
import {
  BUNDLE,
  CLI,
  cleanEnv,
  north,
  northJson,
  ROOT,
  type Spawned,
  spawnProcess,
} from "./support/processes.ts";
import { readProfile, saveAnswer } from "./support/tools.ts";

/** The operator path with real processes: the CLI, `north serve` over HTTP and stdio, `bun run start`. */

let db: TestDatabase;
let operatorEnv: Record<string, string>;
let serveEnv: Record<string, string>;
let server: Spawned;
let mcpUrl: string;
const ids = { org: "", manager: "", member: "" };
const tokens = { manager: "", member: "", readOnly: "", expiring: "", revoked: "", revokedId: "" };

const connect = (token: string) => connectClient(mcpUrl, token);

const post = (token: string | undefined, url = mcpUrl) =>
  fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

beforeAll(async () => {
  db = await createTestDatabase();
  const auditKey = randomBytes(24).toString("hex");
  operatorEnv = { DATABASE_URL: db.ownerUrl };
  serveEnv = {
    DATABASE_APP_URL: db.appUrl,
    NORTH_DB_POOLER: db.pooler,
    NORTH_AUDIT_KEY: auditKey,
    NORTH_SECRET_KEY: "operator-suite-secret-key-0123456789abcdef",
    LOG_LEVEL: "info",
  };

  ids.org = (
    await northJson<{ id: string }>(["org", "create", "Dupont & Associés"], operatorEnv)
  ).id;
  ids.manager = (
    await northJson<{ userId: string }>(
      ["member", "add", "--org", ids.org, "--email", "m@dupont.test", "--manager"],
      operatorEnv,
    )
  ).userId;
  ids.member = (
    await northJson<{ userId: string }>(
      ["member", "add", "--org", ids.org, "--email", "a@dupont.test"],
      operatorEnv,
    )
  ).userId;
  const token = async (user: string, extra: string[] = []) =>
    northJson<{ id: string; token: string }>(
      ["token", "create", "--org", ids.org, "--user", user, ...extra],
      operatorEnv,
    );
  tokens.manager = (await token(ids.manager)).token;
  tokens.member = (await token(ids.member)).token;
  tokens.readOnly = (await token(ids.member, ["--scope", "memory:read"])).token;
  const revoked = await token(ids.member);
  tokens.revoked = revoked.token;
  tokens.revokedId = revoked.id;

  const port = await freePort();
  server = spawnProcess("bun", [CLI, "serve", "--port", String(port)], serveEnv);
  mcpUrl = (await server.waitFor(/"url":"(http:[^"]+)"/))[1] ?? "";
}, 60_000);

afterAll(async () => {
  await server?.interrupt();
  await db.drop();
});

describe("the north CLI", () => {
  it("prints the documented JSON shapes", async () => {
    const created = await northJson(
      [
        "token",
        "create",
        "--org",
        ids.org,
        "--user",
        ids.member,
        "--scope",
        "profile:write",
        "--expires",
        "30d",
      ],
      operatorEnv,
    );
    expect(Object.keys(created).sort()).toEqual(["expiresAt", "id", "scopes", "token"]);
    expect(created.scopes).toEqual(["profile:write"]);
    const member = await northJson(
      ["member", "add", "--org", ids.org, "--email", "x@dupont.test"],
      operatorEnv,
    );
    expect(Object.keys(member).sort()).toEqual(["organizationId", "reinstated", "role", "userId"]);
    const list = await northJson<{ tokens: { id: string }[] }>(
      ["token", "list", "--org", ids.org],
      operatorEnv,
    );
    expect(list.tokens.length).toBeGreaterThanOrEqual(5);
    expect(JSON.stringify(list)).not.toContain(tokens.member);
  });

  it.each([
    [["member", "add", "--org", "not-a-uuid", "--email", "z@x.test"], /--org must be a uuid/],
    [["member", "add", "--email", "z@x.test"], /--org is required/],
    [["member", "add", "--org", "ORG"], /--email is required/],
    [["token", "list"], /--org is required/],
    [["token", "list", "--org", "00000000-0000-0000-0000-000000000000"], /no such organization/],
    [["member", "list", "--org", "00000000-0000-0000-0000-000000000000"], /no such organization/],
    [
      ["token", "create", "--org", "ORG", "--user", "MEMBER", "--expires=-5d"],
      /cannot be negative/,
    ],
    [["token", "create", "--org", "ORG", "--user", "MEMBER", "--expires", "366d"], /at most 365d/],
    [["purge", "--org", "ORG"], /purge does not take --org/],
    [["purge", "now"], /purge does not take "now"/],
    [["member", "role", "--org", "ORG", "--user", "MEMBER", "--role", "owner"], /--role must be/],
    [["member", "remove", "--org", "ORG"], /--user is required/],
    [
      [
        "token",
        "create",
        "--org",
        "00000000-0000-0000-0000-000000000000",
        "--user",
        "00000000-0000-0000-0000-000000000001",
      ],
      /not a member/,
    ],
    [["token", "create", "--org", "ORG", "--user", "MEMBER", "--scope", "root"], /unknown scope/],
    [["token", "create", "--org", "ORG", "--user", "MEMBER", "--scope", "admin"], /managers only/],
    [["token", "create", "--org", "ORG", "--user", "MEMBER", "--expires", "soon"], /--expires/],
    [["org", "create"], /NAME/],
    [["frobnicate"], /unknown command/],
    [["token", "revoke", "00000000-0000-0000-0000-000000000009"], /no such token/],
  ])("refuses %j with one line on stderr and leaves nothing behind", async (args, message) => {
    const resolved = args.map((a) => (a === "ORG" ? ids.org : a === "MEMBER" ? ids.member : a));
    const before = await db.owner
      .client`select (select count(*) from api_tokens)::int as t, (select count(*) from members)::int as m, (select count(*) from organizations)::int as o`;
    const result = await north([...resolved, "--json"], operatorEnv);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    const after = await db.owner
      .client`select (select count(*) from api_tokens)::int as t, (select count(*) from members)::int as m, (select count(*) from organizations)::int as o`;
    expect(after).toEqual(before);
  });
});

describe("north org and member commands", () => {
  it("lists organizations and members with ISO dates, and token lists with emails", async () => {
    const orgs = await northJson<{
      organizations: { id: string; name: string; members: number }[];
    }>(["org", "list"], operatorEnv);
    expect(orgs.organizations).toContainEqual(
      expect.objectContaining({ id: ids.org, name: "Dupont & Associés" }),
    );
    const human = await north(["member", "list", "--org", ids.org], operatorEnv);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/m@dupont\.test {2}manager .* added \d{4}-\d{2}-\d{2}T/);
    const tokenLines = await north(["token", "list", "--org", ids.org], operatorEnv);
    expect(tokenLines.stdout).toContain("a@dupont.test");
    expect(tokenLines.stdout).toMatch(/expires \d{4}-\d{2}-\d{2}T/);
  });

  it("removes a member: their tokens stop working at once, and re-adding reinstates them", async () => {
    const email = `leaving-${randomBytes(3).toString("hex")}@dupont.test`;
    const { userId } = await northJson<{ userId: string }>(
      ["member", "add", "--org", ids.org, "--email", email],
      operatorEnv,
    );
    const { token } = await northJson<{ token: string }>(
      ["token", "create", "--org", ids.org, "--user", userId],
      operatorEnv,
    );
    expect((await post(token)).status).toBe(200);
    const removed = await northJson<{ removed: boolean; tokensRevoked: number }>(
      ["member", "remove", "--org", ids.org, "--user", userId],
      operatorEnv,
    );
    expect(removed).toMatchObject({ removed: true, tokensRevoked: 1 });
    expect((await post(token)).status).toBe(401);
    const again = await north(
      ["token", "create", "--org", ids.org, "--user", userId, "--json"],
      operatorEnv,
    );
    expect(again.stderr).toMatch(/not a member/);
    const listed = await northJson<{ members: { userId: string; removedAt: string | null }[] }>(
      ["member", "list", "--org", ids.org],
      operatorEnv,
    );
    expect(listed.members.find((m) => m.userId === userId)?.removedAt).toMatch(/^\d{4}-/);
    const back = await northJson<{ userId: string; reinstated: boolean }>(
      ["member", "add", "--org", ids.org, "--email", email.toUpperCase()],
      operatorEnv,
    );
    expect(back).toEqual(expect.objectContaining({ userId, reinstated: true }));
    expect((await post(token)).status).toBe(401);
  });

  it("changes a role; demoting a manager revokes their admin tokens only", async () => {
    const { userId } = await northJson<{ userId: string }>(
      [
        "member",
        "add",
        "--org",
        ids.org,
        "--email",
        `boss-${randomBytes(3).toString("hex")}@dupont.test`,
        "--manager",
      ],
      operatorEnv,
    );
    const admin = await northJson<{ token: string }>(
      ["token", "create", "--org", ids.org, "--user", userId, "--scope", "admin"],
      operatorEnv,
    );
    const plain = await northJson<{ token: string }>(
      ["token", "create", "--org", ids.org, "--user", userId],
      operatorEnv,
    );
    const demoted = await northJson<{ role: string; tokensRevoked: number }>(
      ["member", "role", "--org", ids.org, "--user", userId, "--role", "member"],
      operatorEnv,
    );
    expect(demoted).toMatchObject({ role: "member", tokensRevoked: 1 });
    expect((await post(admin.token)).status).toBe(401);
    expect((await post(plain.token)).status).toBe(200);
  });
});

describe("north purge", () => {
  it("removes expired memory bodies, audits it, and prints the counts", async () => {
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      values (${ids.org}, ${ids.member}, 'fact', 'stated', 'expired body', 'test', now() - interval '1 minute'),
             (${ids.org}, ${ids.member}, 'fact', 'stated', 'live body', 'test', now() + interval '1 day')`;
    expect(await northJson(["purge"], operatorEnv)).toMatchObject({
      organizations: 1,
      purged: 1,
      reclaimed: expect.arrayContaining(["vacuum"]),
    });
    const rows = await db.owner
      .client`select body, purged_at from memories where organization_id = ${ids.org} order by body nulls first`;
    expect(rows.map((r) => r.body)).toEqual([null, "live body"]);
    const [audit] = await db.owner
      .client`select affected from audit_events where tool = 'north_purge' and organization_id = ${ids.org}`;
    expect(audit?.affected).toBe(1);
    expect(await northJson(["purge"], operatorEnv)).toMatchObject({ organizations: 0, purged: 0 });
  });
});

describe("north serve over HTTP with API tokens", () => {
  it("saves and reads with a member's token; a colleague sees nothing of it", async () => {
    const member = await connect(tokens.member);
    expect(
      (await saveAnswer(member, { question: "Which courts?", answer: "Nanterre." })).receipt
        .outcome,
    ).toBe("created");
    expect((await readProfile(member)).entries.map((e) => e.answer)).toEqual(["Nanterre."]);
    const manager = await connect(tokens.manager);
    expect((await readProfile(manager)).entries).toEqual([]);
    await Promise.all([member.close(), manager.close()]);
  });

  it("answers 401 with a Bearer challenge for a missing, malformed or revoked token", async () => {
    expect((await post(tokens.revoked)).status).toBe(200);
    await northJson(["token", "revoke", tokens.revokedId], operatorEnv);
    for (const token of [undefined, "north_nope", tokens.revoked]) {
      const response = await post(token);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("answers 401 once a token has expired", async () => {
    tokens.expiring = (
      await northJson<{ token: string }>(
        ["token", "create", "--org", ids.org, "--user", ids.member, "--expires", "2s"],
        operatorEnv,
      )
    ).token;
    expect((await post(tokens.expiring)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_200));
    expect((await post(tokens.expiring)).status).toBe(401);
  });

  it("refuses a token in the query string", async () => {
    expect((await post(undefined, `${mcpUrl}?access_token=${tokens.member}`)).status).toBe(400);
  });

  it("lists no working-profile tool for a token without profile:write", async () => {
    const client = await connect(tokens.readOnly);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(
      "north__working_profile",
    );
    expect((await client.listPrompts()).prompts).toEqual([]);
    await client.close();
  });

  it("keeps bodies and tokens out of the server's logs", () => {
    const logs = server.stdout() + server.stderr();
    expect(logs).toContain('"tool":"north__working_profile_answer"');
    expect(logs).not.toContain("Nanterre");
    expect(logs).not.toContain(tokens.member);
  });
});

describe("north serve --stdio on plain Node", () => {
  beforeAll(async () => {
    // The bundle only: `bun run build` also regenerates the plugin's committed command file.
    await promisify(execFile)("bun", ["scripts/bundle.ts"], { cwd: ROOT });
  }, 60_000);

  // The stdio checks name their clients on purpose: v1 here, v2 at both modes in the next test,
  // so plain Node's stdio is proven at every revision in one run whatever NORTH_TEST_MCP_CLIENT.
  it("serves the SDK client through StdioClientTransport", async () => {
    const transport = new StdioClientTransport({
      command: "node",
      args: [BUNDLE, "serve", "--stdio"],
      env: { ...cleanEnv(), ...serveEnv, NORTH_TOKEN: tokens.member },
      stderr: "pipe",
    });
    const client = new Client({ name: "north-stdio", version: "0" });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(
      "north__working_profile_answer",
    );
    expect(
      (await saveAnswer(client, { question: "Over stdio?", answer: "Yes." })).receipt.outcome,
    ).toBe("created");
    expect((await readProfile(client)).entries.map((e) => e.question)).toContain("Over stdio?");
    await client.close();
  });

  it("serves the v2 client on 2026-07-28, pinned or in auto mode, the same tools and receipts", async () => {
    for (const mode of [{ pin: "2026-07-28" }, "auto"] as const) {
      const transport = new StdioTransportV2({
        command: "node",
        args: [BUNDLE, "serve", "--stdio"],
        env: { ...cleanEnv(), ...serveEnv, NORTH_TOKEN: tokens.member },
        stderr: "ignore",
      });
      const client = new ClientV2(
        { name: "north-stdio-v2", version: "0" },
        { versionNegotiation: { mode } },
      );
      await client.connect(transport);
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getInstructions()?.length ?? 0).toBeGreaterThan(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain(
        "north__working_profile_answer",
      );
      const question = `Over stdio on 2026-07-28, ${mode === "auto" ? "auto" : "pinned"}?`;
      const saved = await client.callTool({
        name: "north__working_profile_answer",
        arguments: { question, answer: "Yes." },
      });
      expect((saved.structuredContent as { outcome?: string }).outcome).toBe("created");
      const read = await client.callTool({ name: "north__working_profile", arguments: {} });
      expect(JSON.stringify(read.structuredContent)).toContain(question);
      await client.close();
    }
  });

  it("writes only JSON-RPC lines on stdout", async () => {
    const child = spawn("node", [BUNDLE, "serve", "--stdio"], {
      env: { ...cleanEnv(), ...serveEnv, NORTH_TOKEN: tokens.member },
    });
    let stdout = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "t", version: "0" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "north__working_profile", arguments: {} },
      },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "north__working_profile_answer", arguments: { question: "", answer: "x" } },
      },
    ];
    for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
    const deadline = Date.now() + 15_000;
    while ((stdout.match(/\n/g)?.length ?? 0) < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    await new Promise((r) => child.on("exit", r));
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
  });

  it("refuses to start without a valid NORTH_TOKEN", async () => {
    const result = await promisify(execFile)("node", [BUNDLE, "serve", "--stdio"], {
      env: { ...cleanEnv(), ...serveEnv, NORTH_TOKEN: tokens.revoked },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/NORTH_TOKEN is invalid, expired or revoked/);
  });
});

describe("bun run start", () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), "north-home-"));
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  it("keeps data across restarts on the same .north, reusing its token", async () => {
    const port = String(await freePort());
    const env = { NORTH_HOME: home, NORTH_PORT: port };
    const first = spawnProcess("bun", ["run", "start"], env);
    const url = (await first.waitFor(/READY (\S+)/, 60_000))[1] ?? "";
    const token = (await readFile(path.join(home, "token"), "utf8")).trim();
    expect((await stat(path.join(home, "token"))).mode & 0o777).toBe(0o600);
    expect(first.stdout()).toContain(
      `claude mcp add --transport http north ${url} --header "Authorization: Bearer ${token}"`,
    );
    expect(first.stdout()).toContain('"NORTH_TOKEN"');
    // How to connect with OAuth, beside the token line (North is its own authorization server).
    expect(first.stdout()).toContain(`claude mcp add --transport http north ${url}   then /mcp`);
    expect(first.stdout()).toMatch(/MCP Inspector .*Quick OAuth Flow/);
    expect(first.stdout()).toMatch(
      /claude\.ai, Claude Desktop, Cowork connectors need NORTH_PUBLIC_URL on https/,
    );
    const base = url.replace(/\/mcp$/, "");
    const metadata = (await (
      await fetch(`${base}/.well-known/oauth-authorization-server`)
    ).json()) as { issuer: string };
    expect(metadata.issuer).toBe(base);
    // Bun's allocator keeps freed pages for the next request (decision 046): only the command
    // that starts the server can say so, and `serve` logs whether it did.
    expect(first.stderr()).toContain('"allocatorKeepsPages":true');
    mcpUrl = url;
    const client = await connect(token);
    await saveAnswer(client, { question: "Survives a restart?", answer: "It should." });
    await client.close();
    expect(await first.interrupt()).toBe(0);
    expect(existsSync(path.join(home, "pg", "postmaster.pid"))).toBe(false);

    const second = spawnProcess("bun", ["run", "start"], env);
    await second.waitFor(/READY/, 60_000);
    expect(second.stdout()).toContain(token);
    expect(second.stdout()).toContain("kept in");
    const again = await connect(token);
    expect((await readProfile(again)).entries.map((e) => e.answer)).toEqual(["It should."]);
    await again.close();
    expect(await second.interrupt()).toBe(0);
  }, 120_000);
});
