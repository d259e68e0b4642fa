import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { inspect } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type EmbeddingsAnswer,
  type EmbeddingsServer,
  embedText,
  startEmbeddingsServer,
} from "../../../../test/support/embeddings-server.ts";
import { capturingLogger } from "../../../../test/support/logs.ts";
import {
  createEmbeddingsProvider,
  EmbedderUnavailableError,
  type EmbeddingsProviderOptions,
} from "./index.ts";

const DIMENSIONS = 8;
const KEY = `sk-north-test-${randomBytes(12).toString("hex")}`;
const MODEL = "test-embed-1";

let server: EmbeddingsServer;
let folder: string;
let keyFile: string;

beforeAll(async () => {
  server = await startEmbeddingsServer(DIMENSIONS);
  folder = mkdtempSync(path.join(tmpdir(), "north-embeddings-"));
  keyFile = path.join(folder, "key");
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});
beforeEach(() => server.reset());

const FAILURES: [string, string, EmbeddingsAnswer][] = [
  ["HTTP 429", "rate_limited", { kind: "status", status: 429 }],
  ["HTTP 401", "credential_refused", { kind: "status", status: 401 }],
  ["HTTP 403", "credential_refused", { kind: "status", status: 403 }],
  ["HTTP 400", "rejected", { kind: "status", status: 400 }],
  ["HTTP 404", "rejected", { kind: "status", status: 404 }],
  ["HTTP 500", "unreachable", { kind: "status", status: 500 }],
  ["HTTP 503", "unreachable", { kind: "status", status: 503 }],
  ["a dropped connection", "unreachable", { kind: "drop" }],
  ["a stall past the timeout", "timeout", { kind: "stall" }],
  ["a body that stalls past the timeout", "timeout", { kind: "stall-body" }],
  ["an answer that is not JSON", "rejected", { kind: "raw", body: "<html>502</html>" }],
  ["a NaN", "rejected", { kind: "raw", body: '{"data":[{"index":0,"embedding":[NaN,1]}]}' }],
  [
    "an infinite value",
    "rejected",
    { kind: "raw", body: '{"data":[{"index":0,"embedding":[1e999,1]}]}' },
  ],
  ["a wrong shape", "rejected", { kind: "raw", body: '{"data":{"embedding":[1]}}' }],
];

/** A provider on the test server, with its log lines and a clock the test moves by hand. */
function setUp(overrides: Partial<EmbeddingsProviderOptions> = {}) {
  const { logger, logs } = capturingLogger("debug");
  let time = Math.ceil(Date.now() / 1000) * 1000;
  const provider = createEmbeddingsProvider({
    url: server.url,
    model: MODEL,
    apiKeyFile: keyFile,
    timeoutMs: 300,
    logger,
    now: () => time,
    ...overrides,
  });
  return {
    provider,
    logs,
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("an OpenAI-compatible embeddings provider", () => {
  it("answers one vector per text in input order, sending the model, the texts and the key as a Bearer token", async () => {
    const { provider } = setUp();
    const texts = ["Lyon hearings start at nine", "Filings go through the portal"];
    const result = await provider.embedMany(texts);
    expect(result).toEqual({ ok: true, vectors: texts.map((t) => embedText(t, DIMENSIONS)) });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      path: "/v1/embeddings",
      authorization: `Bearer ${KEY}`,
      model: MODEL,
      input: texts,
    });
    expect(provider.dimensions).toBe(DIMENSIONS);
    expect(provider.status()).toEqual({ state: "ok", model: MODEL, dimensions: DIMENSIONS });
  });

  it("sends no Authorization header without a key file, and makes no call for no texts", async () => {
    const { provider } = setUp({ apiKeyFile: undefined });
    expect(await provider.embedMany([])).toEqual({ ok: true, vectors: [] });
    expect(server.requests).toHaveLength(0);
    await provider.embed(["one"]);
    expect(server.requests[0]?.authorization).toBeUndefined();
  });

  it("refuses to start on an unreadable or empty key file, without quoting it", () => {
    const missing = path.join(folder, "absent");
    expect(() => setUp({ apiKeyFile: missing })).toThrow(/cannot be read \(ENOENT\)/);
    const empty = path.join(folder, "empty");
    writeFileSync(empty, "  \n");
    expect(() => setUp({ apiKeyFile: empty })).toThrow(/is empty/);
  });

  it.each(FAILURES)("classes %s as %s", async (_name, failureClass, answer) => {
    const { provider } = setUp();
    server.always(answer);
    const result = await provider.embedMany(["a text"]);
    expect(result).toMatchObject({ ok: false, class: failureClass });
    expect(provider.status()).toMatchObject({ state: "degraded", class: failureClass });
    const thrown = await provider.embed(["a text"]).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(EmbedderUnavailableError);
    expect(thrown).toMatchObject({ failureClass });
  });

  it("names a refused connection and an unknown host unreachable", async () => {
    const refused = setUp({ url: `http://127.0.0.1:${await closedPort()}/v1` });
    expect(await refused.provider.embedMany(["x"])).toMatchObject({ class: "unreachable" });
    const unknown = setUp({ url: "http://north-embeddings.invalid/v1", timeoutMs: 5_000 });
    expect(await unknown.provider.embedMany(["x"])).toMatchObject({ class: "unreachable" });
  });

  it("aborts a stalled request at the timeout instead of waiting for it", async () => {
    const { provider } = setUp({ timeoutMs: 250 });
    server.script({ kind: "stall" });
    const started = performance.now();
    expect(await provider.embedMany(["x"])).toMatchObject({ class: "timeout" });
    expect(performance.now() - started).toBeLessThan(1_000);
    await expect.poll(() => server.requests[0]?.aborted).toBe(true);
  });

  it("learns the dimensions from the first answer, then rejects vectors of another length", async () => {
    const { provider } = setUp();
    expect(provider.dimensions).toBeUndefined();
    await provider.embed(["first"]);
    server.script({ kind: "ok", dimensions: DIMENSIONS + 3 });
    expect(await provider.embedMany(["second"])).toMatchObject({ ok: false, class: "rejected" });
    expect(provider.status()).toMatchObject({ dimensions: DIMENSIONS, class: "rejected" });
    expect(await provider.embedMany(["third"])).toMatchObject({ ok: true });
    expect(provider.status()).toEqual({ state: "ok", model: MODEL, dimensions: DIMENSIONS });
  });
});

describe("the provider's Retry-After and circuit breaker", () => {
  it("makes no call before a Retry-After in seconds has passed", async () => {
    const { provider, advance } = setUp();
    server.script({ kind: "status", status: 429, headers: { "Retry-After": "2" } });
    expect(await provider.embedMany(["x"])).toMatchObject({
      class: "rate_limited",
      retryAfterMs: 2_000,
    });
    advance(1_999);
    expect(await provider.embedMany(["x"])).toMatchObject({
      class: "rate_limited",
      retryAfterMs: 1,
    });
    expect(server.requests).toHaveLength(1);
    advance(1);
    expect(await provider.embedMany(["x"])).toMatchObject({ ok: true });
    expect(server.requests).toHaveLength(2);
    expect(provider.status().state).toBe("ok");
  });

  it("makes no call before a Retry-After HTTP-date", async () => {
    const { provider, advance, now } = setUp();
    const at = new Date(now() + 5_000).toUTCString();
    server.script({ kind: "status", status: 429, headers: { "Retry-After": at } });
    expect(await provider.embedMany(["x"])).toMatchObject({ retryAfterMs: 5_000 });
    advance(4_999);
    expect(await provider.embedMany(["x"])).toMatchObject({ class: "rate_limited" });
    expect(server.requests).toHaveLength(1);
    advance(1);
    expect(await provider.embedMany(["x"])).toMatchObject({ ok: true });
  });

  it("waits out a Retry-After on the real clock", async () => {
    const { provider } = setUp({ now: Date.now });
    server.script({ kind: "status", status: 429, headers: { "Retry-After": "1" } });
    await provider.embedMany(["x"]);
    let result = await provider.embedMany(["x"]);
    while (!result.ok) {
      await new Promise((r) => setTimeout(r, 50));
      result = await provider.embedMany(["x"]);
    }
    const [limited, next] = server.requests;
    expect(server.requests).toHaveLength(2);
    expect((next?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1_000);
  });

  it("opens after three failures, half-opens with one probe, backs off when it fails and recovers when it answers", async () => {
    const { provider, advance, logs } = setUp();
    server.always({ kind: "status", status: 500, body: "upstream secret body" });
    for (let i = 0; i < 3; i++) await provider.embedMany(["x"]);
    expect(server.requests).toHaveLength(3);
    expect(await provider.embedMany(["x"])).toMatchObject({
      class: "unreachable",
      retryAfterMs: 1_000,
    });
    expect(server.requests).toHaveLength(3);

    advance(1_000);
    expect(await provider.embedMany(["x"])).toMatchObject({
      class: "unreachable",
      retryAfterMs: 2_000,
    });
    expect(server.requests).toHaveLength(4);
    advance(1_999);
    await provider.embedMany(["x"]);
    expect(server.requests).toHaveLength(4);

    advance(1);
    server.always({ kind: "ok", delayMs: 100 });
    const probe = provider.embedMany(["probe"]);
    expect(await provider.embedMany(["meanwhile"])).toMatchObject({ class: "unreachable" });
    expect(await probe).toMatchObject({ ok: true });
    expect(server.requests.map((r) => r.input[0])).toEqual(["x", "x", "x", "x", "probe"]);
    expect(provider.status()).toEqual({ state: "ok", model: MODEL, dimensions: DIMENSIONS });
    expect(await provider.embedMany(["after"])).toMatchObject({ ok: true });

    const warnings = logs.filter((line) => line.includes('"level":40'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"class":"unreachable"');
    expect(logs.filter((line) => line.includes("answering again"))).toHaveLength(1);
    expect(logs.join("")).not.toContain("upstream secret body");
  });

  it("opens at the first refused credential and logs each change of class once", async () => {
    const { provider, advance, logs } = setUp();
    server.script({ kind: "status", status: 401 });
    expect(await provider.embedMany(["x"])).toMatchObject({ class: "credential_refused" });
    await provider.embedMany(["x"]);
    expect(server.requests).toHaveLength(1);
    advance(1_000);
    server.script({ kind: "status", status: 429 });
    expect(await provider.embedMany(["x"])).toMatchObject({ class: "rate_limited" });
    const since = provider.status().since;
    expect(provider.status()).toMatchObject({ state: "degraded", class: "rate_limited" });
    expect(since).toBeDefined();
    const warned = logs.filter((line) => line.includes('"level":40'));
    expect(warned.map((line) => JSON.parse(line).embedder.class)).toEqual([
      "credential_refused",
      "rate_limited",
    ]);
  });

  it("never puts the key in a log line, an error, a result or the provider itself", async () => {
    const { provider, logs, advance } = setUp();
    const seen: unknown[] = [];
    for (const [, , answer] of FAILURES) {
      server.script(answer);
      seen.push(await provider.embedMany(["x"]));
      seen.push(await provider.embed(["x"]).catch((error: unknown) => error));
      advance(120_000);
    }
    seen.push(await provider.embedMany(["x"]));
    expect(server.requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    const everything = [
      ...logs,
      ...seen.map((value) => inspect(value, { depth: 6 })),
      ...seen.map((value) => (value instanceof Error ? `${value.message} ${value.stack}` : "")),
      inspect(provider, { depth: 6, showHidden: true, getters: true }),
      JSON.stringify(provider),
      JSON.stringify(provider.status()),
    ].join("\n");
    expect(everything).toContain("credential_refused");
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain(KEY.slice(-12));
  });
});

describe("batching", () => {
  it("splits texts into requests of at most maxBatchSize and keeps their order", async () => {
    const { provider } = setUp({ maxBatchSize: 3 });
    const texts = Array.from({ length: 8 }, (_, i) => `memory number ${"abcdefgh"[i]}`);
    const result = await provider.embedMany(texts);
    expect(server.requests.map((r) => r.input.length)).toEqual([3, 3, 2]);
    expect(server.requests.flatMap((r) => r.input)).toEqual(texts);
    expect(result).toEqual({ ok: true, vectors: texts.map((t) => embedText(t, DIMENSIONS)) });
  });

  it("stops at the first batch that fails and names its class", async () => {
    const { provider } = setUp({ maxBatchSize: 2 });
    server.script({ kind: "ok" }, { kind: "status", status: 413 });
    const result = await provider.embedMany(["a", "b", "c", "d", "e"]);
    expect(result).toMatchObject({ ok: false, class: "rejected" });
    expect(server.requests).toHaveLength(2);
  });
});
