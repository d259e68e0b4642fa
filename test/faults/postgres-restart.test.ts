import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SAVE_TOOL } from "@north/agent-runtime";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import {
  type RestartablePostgres,
  startRestartablePostgres,
} from "../support/restartable-postgres.ts";
import {
  connectClient,
  mintMemberTokens,
  readiness,
  type ServeProcess,
  spawnServe,
} from "../support/serve-process.ts";

/**
 * SPEC §10, PostgreSQL restarted under load: a real `north serve` on a PostgreSQL of this suite's
 * own, eight writers saving working-profile answers through MCP, PostgreSQL stopped in the
 * middle and started again. While it is down every call fails fast with a typed
 * NORTH_UNAVAILABLE; the same server answers again within 5 s of the restart without being
 * restarted; `/readyz` follows; every acknowledged save is in the table with its version, and
 * no save is half-written (each committed version has its ledger row, and no more).
 */

const WRITERS = 8;
/** Saves one writer may start, and the time the whole run may take: the load is bounded. */
const MAX_STEPS = 200;
const RUN_LIMIT_MS = 60_000;
/** A failure while PostgreSQL is down must come back at least this fast (no hang). */
const FAIL_FAST_MS = 3_000;
const CONNECT_TIMEOUT_MS = 2_000;

let pg: RestartablePostgres;
let server: ServeProcess;
let tokens: { organizationId: string; token: string }[];
const clients: Client[] = [];

beforeAll(async () => {
  pg = await startRestartablePostgres();
  tokens = await mintMemberTokens(pg.ownerUrl, WRITERS + 1);
  server = await spawnServe(pg.appUrl, {
    NORTH_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
  });
  for (const { token } of tokens) clients.push(await connectClient(server.url, token, 20_000));
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await server?.interrupt();
  await pg?.close();
});

interface Attempt {
  writer: number;
  step: number;
  /** created / updated / noop, `NORTH_…` for a refusal, `thrown` for anything else. */
  outcome: string;
  detail?: string;
  /** For a refusal: the seconds its receipt says to wait before sending the call again. */
  retryAfterS?: number;
  startedAt: number;
  ms: number;
}

interface Ack {
  version: number;
  answer: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One writer: creates an entry, updates it, creates the next… Each save is sent again (the same
 * call) after a failure until it is acknowledged, as a model told "try again shortly" would.
 */
function startWriter(writer: number, client: Client, control: { stop: boolean; deadline: number }) {
  const attempts: Attempt[] = [];
  const acked = new Map<string, Ack>();
  const done = (async () => {
    let entry: { id: string; version: number } | undefined;
    for (let step = 0; step < MAX_STEPS && !control.stop; step++) {
      const question = `Writer ${writer}: how do you open matter ${Math.floor(step / 2)}?`;
      const answer = `Step ${step} of writer ${writer}`;
      const update = step % 2 === 1 && entry !== undefined;
      const args = update
        ? { question, answer, question_id: entry?.id, expected_version: entry?.version }
        : { question, answer };
      for (;;) {
        if (Date.now() > control.deadline) return;
        const startedAt = Date.now();
        const attempt: Attempt = { writer, step, outcome: "thrown", startedAt, ms: 0 };
        attempts.push(attempt);
        try {
          const result = await client.callTool({ name: SAVE_TOOL, arguments: args }, undefined, {
            timeout: 20_000,
          });
          attempt.ms = Date.now() - startedAt;
          const receipt = result.structuredContent as
            | {
                outcome: string;
                question_id: string;
                answer_version: number;
                code?: string;
                retry_after_s?: number;
              }
            | undefined;
          const text = (result.content as { text?: string }[])[0]?.text ?? "";
          if (result.isError) {
            attempt.outcome = receipt?.code ?? /^rejected: (NORTH_[A-Z_]+)/.exec(text)?.[1] ?? "";
            attempt.detail = text;
            attempt.retryAfterS = receipt?.retry_after_s;
            await sleep(100);
            continue;
          }
          attempt.outcome = receipt?.outcome ?? "";
          if (receipt) {
            entry = { id: receipt.question_id, version: receipt.answer_version };
            acked.set(receipt.question_id, { version: receipt.answer_version, answer });
          }
          break;
        } catch (error) {
          attempt.ms = Date.now() - startedAt;
          attempt.detail = (error as Error).message;
          await sleep(100);
        }
      }
    }
  })();
  return { attempts, acked, done };
}

describe("PostgreSQL restarted under load", () => {
  it("fails fast with NORTH_UNAVAILABLE while down, recovers by itself, and loses no acknowledged save", async () => {
    onTestFailed(() => console.log(server.stdout(), server.stderr()));
    const control = { stop: false, deadline: Date.now() + RUN_LIMIT_MS };
    const writers = tokens
      .slice(0, WRITERS)
      .map((_, i) => startWriter(i, clients[i] as Client, control));
    const acks = () => writers.map((w) => w.acked.size);
    while (acks().some((n) => n < 2) && Date.now() < control.deadline) await sleep(50);
    expect(await readiness(server.base)).toMatchObject({ code: 200, body: { database: "ok" } });

    const stoppedAt = Date.now();
    await pg.stop();
    // Down for a while: every writer keeps calling; /readyz says so.
    const down: Awaited<ReturnType<typeof readiness>>[] = [];
    while (Date.now() - stoppedAt < 3_000) {
      down.push(await readiness(server.base));
      await sleep(200);
    }
    await pg.start();
    const restartedAt = Date.now();

    // The same server answers a call again, without a restart of its own.
    const probe = clients[WRITERS] as Client;
    let answeredAt = 0;
    while (!answeredAt && Date.now() - restartedAt < 15_000) {
      const result = await probe.callTool({ name: "north__working_profile", arguments: {} });
      if (!result.isError) answeredAt = Date.now();
      else await sleep(100);
    }
    const up = await readiness(server.base);
    await sleep(1_000);
    control.stop = true;
    await Promise.all(writers.map((w) => w.done));

    const attempts = writers.flatMap((w) => w.attempts);
    const failures = attempts.filter((a) => !["created", "updated", "noop"].includes(a.outcome));
    // Nothing but typed NORTH_UNAVAILABLE refusals: no HTTP 500, no JSON-RPC -32603, no hang.
    expect(failures.filter((a) => a.outcome !== "NORTH_UNAVAILABLE")).toEqual([]);
    expect(failures.length).toBeGreaterThanOrEqual(WRITERS);
    // A typed receipt the model can act on: the code in its text and a wait before retrying.
    expect(failures.every((a) => a.detail?.startsWith("rejected: NORTH_UNAVAILABLE"))).toBe(true);
    expect(failures.every((a) => (a.retryAfterS ?? 0) > 0)).toBe(true);
    expect(Math.max(...failures.map((a) => a.ms))).toBeLessThan(FAIL_FAST_MS);
    // Every writer got through the outage and went on saving.
    for (const w of writers) {
      expect(w.attempts.at(-1)?.outcome).toMatch(/^(created|updated|noop)$/);
      expect(w.attempts.some((a) => a.startedAt > restartedAt && a.outcome !== "thrown")).toBe(
        true,
      );
    }
    expect(server.child.exitCode).toBeNull();
    expect(answeredAt).toBeGreaterThan(0);
    expect(answeredAt - restartedAt).toBeLessThan(5_000);
    expect(down.map((r) => r.code)).toContain(503);
    expect(down.find((r) => r.code === 503)?.body).toMatchObject({
      status: "unavailable",
      database: "unreachable",
    });
    expect(up).toMatchObject({ code: 200, body: { database: "ok" } });

    const owner = postgres(pg.ownerUrl, { max: 1, onnotice: () => {} });
    try {
      const rows = await owner<
        { organization_id: string; question_id: string; version: number; answer: string }[]
      >`select organization_id, question_id, version, answer from working_profile_answers`;
      const ledger = await owner<{ organization_id: string; committed: number }[]>`
        select organization_id, count(*)::int as committed from audit_events
        where tool = ${SAVE_TOOL} and outcome in ('created', 'updated')
        group by organization_id`;
      for (const [i, w] of writers.entries()) {
        const organizationId = tokens[i]?.organizationId;
        const mine = rows.filter((r) => r.organization_id === organizationId);
        // Every acknowledged save is there with the version it was acknowledged with.
        expect(
          Object.fromEntries(
            mine.map((r) => [r.question_id, { version: r.version, answer: r.answer }]),
          ),
        ).toEqual(Object.fromEntries(w.acked));
        // Each committed version wrote its ledger row in the same transaction: none without.
        const versions = mine.reduce((sum, r) => sum + r.version, 0);
        expect(ledger.find((l) => l.organization_id === organizationId)?.committed).toBe(versions);
      }
    } finally {
      await owner.end({ timeout: 5 });
    }
  }, 120_000);
});
