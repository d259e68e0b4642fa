import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createApiToken, freePort } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import {
  type EmbeddingsAnswer,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from "./support/embeddings-server.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { connectMcpClient } from "./support/mcp-client.ts";
import { recall, remember } from "./support/memory-tools.ts";
import { CLI, type Spawned, spawnProcess } from "./support/processes.ts";

/**
 * `north serve` as a real process with `NORTH_EMBEDDINGS_*` pointed at an OpenAI-compatible
 * server in this test process: recall is semantic while it answers, and when it fails the
 * class shows in `/readyz` and `GET /manifest`, writes still succeed, recall falls back to full
 * text, and everything comes back once it answers again.
 */

const KEY = `sk-north-e2e-${randomBytes(16).toString("hex")}`;

let db: TestDatabase;
let embeddings: EmbeddingsServer;
let server: Spawned;
let folder: string;
let base: string;
let token: string;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  embeddings = await startEmbeddingsServer(32);
  folder = await mkdtemp(path.join(tmpdir(), "north-embeddings-e2e-"));
  const keyFile = path.join(folder, "embeddings-key");
  await writeFile(keyFile, `${KEY}\n`, { mode: 0o600 });
  const ws = await createWorkspace(db.owner.db);
  token = (
    await createApiToken(db.owner.db, {
      organizationId: ws.organizationId,
      userId: ws.member.userId,
      scopes: ["memory:read", "memory:write", "profile:write"],
      expiresAt: null,
    })
  ).token;
  const port = await freePort();
  server = spawnProcess("bun", [CLI, "serve", "--port", String(port)], {
    DATABASE_APP_URL: db.appUrl,
    DATABASE_MAINTENANCE_URL: db.maintenanceUrl,
    NORTH_DB_POOLER: db.pooler,
    NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
    NORTH_SECRET_KEY: "embeddings-suite-secret-key-0123456789abcdef",
    NORTH_PURGE_INTERVAL_S: "0",
    LOG_LEVEL: "info",
    NORTH_EMBEDDINGS_URL: embeddings.url,
    NORTH_EMBEDDINGS_MODEL: "test-embed-1",
    NORTH_EMBEDDINGS_API_KEY_FILE: keyFile,
    NORTH_EMBEDDINGS_TIMEOUT_MS: "1000",
    NORTH_EMBEDDINGS_BACKFILL_MS: "300",
  });
  const url = (await server.waitFor(/"url":"(http:[^"]+)"/))[1] ?? "";
  base = url.replace(/\/mcp$/, "");
  client = await connectMcpClient(url, { token, name: "north-embeddings-e2e" });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await server?.interrupt();
  await embeddings?.close();
  await db?.drop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function readiness() {
  const response = await fetch(`${base}/readyz`);
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function semanticRecall() {
  const response = await fetch(`${base}/manifest`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const manifest = (await response.json()) as {
    capabilities: { id: string; active: boolean; reason?: string }[];
  };
  return manifest.capabilities.find((c) => c.id === "semantic-recall");
}

const QUERY = { query: "when do Lyon hearings start", limit: 1 };

/** Recalls until the provider answers again (its breaker lets a probe through), or gives up. */
async function recallUntilSemantic(timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await recall(client, QUERY);
    if (found.structured.mode === "semantic" || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("north serve with an embeddings provider", () => {
  it("follows the provider in /readyz and the manifest: ok, degraded with the class, ok again", async () => {
    expect(await readiness()).toEqual({
      code: 200,
      body: expect.objectContaining({ status: "ok", embedder: { state: "ok" } }),
    });
    expect(await semanticRecall()).toMatchObject({ active: true });

    const stored = await remember(client, {
      kind: "fact",
      body: "Hearings in Lyon start at nine",
      origin: "stated",
    });
    expect(stored.structured).toMatchObject({ outcome: "created" });
    await remember(client, {
      kind: "fact",
      body: "Filings go through the portal",
      origin: "stated",
    });
    const found = await recall(client, QUERY);
    expect(found.structured.mode).toBe("semantic");
    expect(found.structured.block).toContain("Hearings in Lyon start at nine");
    expect(embeddings.requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(embeddings.requests.map((r) => r.model)).toContain("test-embed-1");

    // Rate limited for two seconds: recall falls back to full text, writes still land.
    embeddings.always({ kind: "status", status: 429, headers: { "Retry-After": "2" } });
    const before = embeddings.requests.length;
    const fallback = await recall(client, QUERY);
    expect(fallback.isError).toBe(false);
    expect(fallback.structured.mode).toBe("fulltext");
    // The recall says why it is not semantic, and the ledger records the class.
    expect(fallback.structured.degraded).toBe("rate_limited");
    const [ledger] = await db.owner.client`
      select outcome, reason from audit_events
      where tool = 'north__memory_recall' order by occurred_at desc limit 1`;
    expect(ledger).toEqual({ outcome: "read", reason: "rate_limited" });
    const limitedAt = embeddings.requests.at(-1)?.at ?? 0;
    const during = await remember(client, {
      kind: "fact",
      body: "The Lyon registry closes at five",
      origin: "stated",
    });
    expect(during.isError).toBe(false);
    expect(during.structured).toMatchObject({ outcome: "created" });
    // The breaker honours Retry-After: the write did not call the provider again.
    expect(embeddings.requests.length).toBe(before + 1);
    expect(await readiness()).toEqual({
      code: 200,
      body: expect.objectContaining({
        status: "degraded",
        database: "ok",
        embedder: { state: "degraded", class: "rate_limited" },
      }),
    });
    expect(await semanticRecall()).toEqual(
      expect.objectContaining({ active: false, reason: "degraded:rate_limited" }),
    );

    embeddings.always({ kind: "ok" });
    const again = await recallUntilSemantic();
    expect(again.structured.mode).toBe("semantic");
    expect(again.structured.degraded).toBeUndefined();
    expect(embeddings.requests[before + 1]?.at ?? 0).toBeGreaterThanOrEqual(limitedAt + 2_000);
    expect(await readiness()).toEqual({
      code: 200,
      body: expect.objectContaining({ status: "ok", embedder: { state: "ok" } }),
    });
    expect(await semanticRecall()).toMatchObject({ active: true });

    // The memory written during the outage was stored without a vector; once the provider
    // answers again, the backfill embeds it, recorded with the model that made it.
    const written = String((during.structured as { memory_id: string }).memory_id);
    const deadline = Date.now() + 15_000;
    let backfilled: { model: string | null; dims: number | null } | undefined;
    for (;;) {
      [backfilled] = await db.owner.client<{ model: string | null; dims: number | null }[]>`
        select embedding_model as model, cardinality(embedding) as dims
        from memories where id = ${written}`;
      if (backfilled?.model || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(backfilled?.model).toMatch(/^test-embed-1@\d+$/);
    expect(backfilled?.model).toBe(`test-embed-1@${backfilled?.dims}`);
    // The backfill asked for the model's HNSW index once (decision 028): built where the server
    // has pgvector, and said to be unavailable where it has not.
    const [pgvector] = await db.owner.client`
      select 1 from pg_available_extensions where name = 'vector'`;
    const indexLines = server
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"vectorIndex"'));
    expect(indexLines).toHaveLength(1);
    expect(indexLines[0]).toContain(`"vectorIndex":"${pgvector ? "created" : "unavailable"}"`);
    const lyon = await recall(client, { query: "When does the Lyon registry close?" });
    expect(lyon.structured.mode).toBe("semantic");
    expect(lyon.structured.memories.map((m) => m.memory_id)).toContain(written);

    // A refused credential: the same path, with its own class.
    embeddings.always({ kind: "status", status: 401 });
    const refused = await recall(client, QUERY);
    expect(refused.structured).toMatchObject({ mode: "fulltext", degraded: "credential_refused" });
    expect((await readiness()).body).toMatchObject({
      status: "degraded",
      embedder: { state: "degraded", class: "credential_refused" },
    });
    expect(await semanticRecall()).toMatchObject({ reason: "degraded:credential_refused" });
    embeddings.always({ kind: "ok" });
    expect((await recallUntilSemantic()).structured.mode).toBe("semantic");
    expect((await readiness()).body).toMatchObject({ status: "ok", embedder: { state: "ok" } });

    const logs = server.stdout() + server.stderr();
    const lines = logs.split("\n").filter((line) => line.includes('"embedder"'));
    expect(lines.filter((line) => line.includes('"class":"rate_limited"'))).toHaveLength(1);
    expect(lines.filter((line) => line.includes('"class":"credential_refused"'))).toHaveLength(1);
    expect(lines.filter((line) => line.includes("answering again"))).toHaveLength(2);
    expect(logs).not.toContain(KEY);
    expect(logs).not.toContain("Hearings in Lyon");
  });
});

/**
 * SPEC §5 and issue 13's must-show, one failure at a time: the provider fails in one way, a
 * remember still stores its memory (without a vector), recall falls back to full text and names
 * the class, `/readyz` reports it; the provider recovers, and the backfill embeds the memory
 * written during the outage, `/readyz` is ok again.
 */
describe("each failure class of the provider", () => {
  const cases: Array<{ name: string; answer: EmbeddingsAnswer; class: string }> = [
    { name: "HTTP 400", answer: { kind: "status", status: 400 }, class: "rejected" },
    { name: "HTTP 403", answer: { kind: "status", status: 403 }, class: "credential_refused" },
    {
      name: "HTTP 429 with Retry-After",
      answer: { kind: "status", status: 429, headers: { "Retry-After": "1" } },
      class: "rate_limited",
    },
    { name: "HTTP 500", answer: { kind: "status", status: 500 }, class: "unreachable" },
    { name: "a dropped connection", answer: { kind: "drop" }, class: "unreachable" },
    { name: "a stall past the timeout", answer: { kind: "stall" }, class: "timeout" },
    { name: "a body that is not JSON", answer: { kind: "raw", body: "<html>" }, class: "rejected" },
    {
      name: "a vector holding NaN",
      answer: { kind: "raw", body: '{"data":[{"index":0,"embedding":[NaN,1]}]}' },
      class: "rejected",
    },
    {
      name: "vectors of other dimensions",
      answer: { kind: "ok", dimensions: 7 },
      class: "rejected",
    },
  ];

  it.each(cases)(
    "$name → $class: the write lands, recall degrades, the backfill catches up",
    async (c) => {
      embeddings.always({ kind: "ok" });
      expect((await recallUntilSemantic()).structured.mode).toBe("semantic");
      embeddings.always(c.answer);
      const tag = `outage${randomBytes(4).toString("hex")}`;
      const body = `During the ${c.name} (${tag}) the Lyon archive moved`;
      const during = await remember(client, { kind: "fact", body, origin: "stated" });
      expect(during.isError).toBe(false);
      expect(during.structured).toMatchObject({ outcome: "created" });
      const id = String((during.structured as { memory_id: string }).memory_id);
      const [stored] = await db.owner.client`select embedding_model from memories where id = ${id}`;
      expect(stored).toEqual({ embedding_model: null });

      const fallback = await recall(client, { query: tag });
      expect(fallback.isError).toBe(false);
      expect(fallback.structured).toMatchObject({ mode: "fulltext", degraded: c.class });
      expect(fallback.structured.memories.map((m) => m.memory_id)).toContain(id);
      expect(await readiness()).toEqual({
        code: 200,
        body: expect.objectContaining({
          status: "degraded",
          embedder: { state: "degraded", class: c.class },
        }),
      });

      embeddings.always({ kind: "ok" });
      expect((await recallUntilSemantic()).structured.mode).toBe("semantic");
      const deadline = Date.now() + 15_000;
      let model: string | null | undefined;
      while (!model && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        [{ model } = { model: null }] = await db.owner.client<{ model: string | null }[]>`
        select embedding_model as model from memories where id = ${id}`;
      }
      expect(model).toBe(`test-embed-1@${embeddings.dimensions}`);
      expect((await readiness()).body).toMatchObject({ status: "ok", embedder: { state: "ok" } });
    },
  );
});
