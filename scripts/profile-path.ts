/**
 * `bun scripts/profile-path.ts <workload>[,<workload>…] [seconds]`: the server's CPU per call on
 * the product path, in process (`app.fetch`, no socket, no client), so one can profile it
 * (`bun --cpu-prof scripts/profile-path.ts read`) without the bench's seeding and clients.
 * Eight concurrent callers (PROFILE_CALLERS), each with a real API token (saves by lawyers of
 * their own, so they never grow the profile the reads return); prints µs of CPU per
 * call. Workloads: ping, read, save, recall (tools/call through `app.fetch`), token (the token
 * check alone), tenant-read (the profile read's tenant transaction alone, through `withTenant`
 * with the token's proof and `finishWith`, as the tool runner sends it: one batch), raw-read
 * (the same statements written straight to postgres.js: the driver's floor), raw-implicit (the
 * same read as one batch, decision 044: the tenant, the read and the audit row with one Sync and
 * no BEGIN or COMMIT), raw-save and raw-save-batched (a save's two writes straight to
 * postgres.js, each statement with its Sync or each write with one, decision 045).
 * PROFILE_REVISION=2026-07-28 sends the new revision's envelope.
 *
 * The machine drifts by a third within minutes, so several workloads are measured interleaved:
 * one-second slices of each in turn, `seconds` rounds, and each workload's CPU summed over its
 * slices. Compare figures of one run, never of two. PostgreSQL's CPU per call is printed beside
 * North's when it runs on this machine. The tenant gate is opened to the callers
 * (they share one firm): its fairness limit is not what this measures.
 */
import { randomBytes } from "node:crypto";
import {
  type ApiTokenProof,
  addMember,
  auditStatement,
  connectDatabase,
  createApiToken,
  createFingerprinter,
  createOrganization,
  enterStatement,
  finishWith,
  hashToken,
  readOwnProfile,
  resolveApiToken,
  type Tenant,
  withTenant,
} from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createLogger,
  createRateLimiter,
} from "@north/mcp-server";
import { postgresCpu } from "./bench-cpu.ts";
import { createBenchDatabase } from "./bench-database.ts";

const workloads = (process.argv[2] ?? "read").split(",");
const seconds = Number(process.argv[3] ?? 5);
const CALLERS = Number(process.env.PROFILE_CALLERS ?? 8);
const bench = await createBenchDatabase("north_profile");
try {
  const owner = connectDatabase(bench.ownerUrl, { max: 2 });
  const org = await createOrganization(owner.db, { name: "Profile" });
  const tokens: string[] = [];
  // Twice as many lawyers as callers: the first half reads, the second saves, so a run that
  // saves beside its reads (`save,read`) never grows the profile the reads return.
  for (let i = 0; i < 2 * CALLERS; i++) {
    const m = await addMember(owner.db, { organizationId: org.id, email: `p${i}@example.test` });
    await owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
      select ${m.organizationId}, ${m.userId}, 'seed-' || g, 'Seed question ' || g || '?', repeat('answer ', 20)
      from generate_series(1, 10) g`;
    const created = await createApiToken(owner.db, {
      organizationId: m.organizationId,
      userId: m.userId,
      scopes: ["profile:write", "memory:read", "memory:write"],
      expiresAt: null,
    });
    tokens.push(created.token);
  }
  await owner.client`
    insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
    select ${org.id}, (select owner_user_id from working_profile_answers limit 1), 'fact', 'stated',
           'Memory ' || g || ' about term' || (g % 50) || ' and term' || ((g * 7) % 50),
           'bench', now() + interval '90 days'
    from generate_series(1, 20000) g`;
  await owner.client`analyze memories`;
  const app = connectDatabase(bench.appUrl, { max: 10, statementTimeoutMs: 5_000 });
  /** Each token's principal and the proof a call of the product path sends for it (decision 036). */
  const principals = new Map<string, { tenant: Tenant; proof: ApiTokenProof }>();
  for (const token of tokens) {
    const r = await resolveApiToken(app.db, token);
    if (r) {
      const { organizationId, userId, tokenId, role, scopes } = r;
      principals.set(token, {
        tenant: { organizationId, userId },
        proof: { apiTokenHash: hashToken(token), tokenId, role, scopes },
      });
    }
  }
  const mcp = buildMcpApp({
    db: app.db,
    resolvePrincipal: createAuthResolver(app.db),
    limiter: createRateLimiter({
      writesPerMinute: 1e9,
      readsPerMinute: 1e9,
      protocolRequestsPerMinute: 1e9,
    }),
    logger: createLogger({ level: "warn" }),
    auditKey: randomBytes(32).toString("hex"),
    tenantConcurrency: { perOrganization: CALLERS, maxWaitMs: 5_000 },
  });
  const modern = process.env.PROFILE_REVISION === "2026-07-28";
  const body = (workload: string, n: number) => {
    const message =
      workload === "ping"
        ? { method: "ping", params: {} }
        : {
            method: "tools/call",
            params:
              workload === "save"
                ? {
                    name: "north__working_profile_answer",
                    arguments: { question: `Q ${n}?`, answer: "A benchmark answer." },
                  }
                : workload === "recall"
                  ? {
                      name: "north__memory_recall",
                      arguments: { query: `term${n % 50}`, limit: 5 },
                    }
                  : { name: "north__working_profile", arguments: {} },
          };
    const params = modern
      ? {
          ...message.params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "profile", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        }
      : message.params;
    return { jsonrpc: "2.0", id: n, method: message.method, params };
  };
  const call = async (workload: string, token: string, n: number) => {
    if (workload === "token") {
      if (!(await resolveApiToken(app.db, token))) throw new Error("token refused");
      return;
    }
    if (workload === "tenant-read") {
      const p = principals.get(token);
      if (!p) throw new Error("no principal");
      // The read goes out with its audit row as the tool runner sends it (`finishWith`): one
      // batch with the tenant's proof, no BEGIN or COMMIT (decision 044).
      await withTenant(
        app.db,
        p.tenant,
        (tx) =>
          finishWith(
            tx,
            [
              auditStatement({
                tool: "north__working_profile",
                outcome: "read",
                tokenId: p.proof.tokenId,
                requestId: crypto.randomUUID(),
              }),
            ],
            () => readOwnProfile(tx),
          ),
        undefined,
        { proof: p.proof },
      );
      return;
    }
    if (workload === "raw-read") {
      const p = principals.get(token);
      if (!p) throw new Error("no principal");
      await rawRead(p);
      return;
    }
    if (workload === "raw-implicit") {
      const p = principals.get(token);
      if (!p) throw new Error("no principal");
      await rawRead(p, true);
      return;
    }
    if (workload === "raw-save" || workload === "raw-save-batched") {
      const p = principals.get(token);
      if (!p) throw new Error("no principal");
      await rawSave(p, n, workload === "raw-save-batched");
      return;
    }
    const b = body(workload, n);
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": modern ? "2026-07-28" : "2025-11-25",
      host: "127.0.0.1",
    };
    if (modern) {
      headers["mcp-method"] = b.method;
      if (b.method === "tools/call") headers["mcp-name"] = (b.params as { name: string }).name;
    }
    // The length as an HTTP client sends it: without it the body limit reads the body itself.
    const json = JSON.stringify(b);
    headers["content-length"] = String(Buffer.byteLength(json));
    const response = await mcp.fetch(
      new Request("http://127.0.0.1/mcp", { method: "POST", headers, body: json }),
    );
    const text = await response.text();
    if (response.status !== 200 || text.includes('"isError":true') || text.includes('"error"')) {
      throw new Error(`call failed: ${response.status} ${text.slice(0, 300)}`);
    }
  };
  const OWN_PROFILE =
    "select question_id, question_text, answer, version, created_at, updated_at from working_profile_answers where organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_user_id = nullif(current_setting('north.user_id', true), '')::uuid order by created_at, question_id";
  /**
   * The profile read's transaction with none of North's own machinery: BEGIN, the token's proof
   * that sets the tenant (the text `withTenant` sends with a proof, as a tool call does), the
   * read (the tool calls' own-profile read, READ_OWN_PROFILE, spelt here without Drizzle's
   * quoting and sent prepared as `runStatement` sends it), the audit row (`auditStatement`) and
   * COMMIT, written to one reserved connection at once; with `batch`, the same three statements
   * as one batch without BEGIN or COMMIT (decision 044), as a tool call's read now goes out.
   */
  const rawRead = async (
    { tenant, proof }: { tenant: Tenant; proof: ApiTokenProof },
    batch = false,
  ) => {
    const audit = auditStatement({
      tool: "north__working_profile",
      outcome: "read",
      tokenId: proof.tokenId,
      requestId: crypto.randomUUID(),
    });
    const enter = enterStatement(tenant, proof);
    const inBatch = batch ? { batch: true } : {};
    const c = await app.client.reserve();
    try {
      const statements = [
        c.unsafe(enter.text, enter.params as never[], { prepare: true, ...inBatch } as never),
        c.unsafe(OWN_PROFILE, [], { simple: false, ...inBatch } as never),
        c.unsafe(audit.text, audit.params as never[], { prepare: true }),
      ];
      const answers = batch
        ? await Promise.all(statements)
        : (await Promise.all([c.unsafe("begin"), ...statements, c.unsafe("commit")])).slice(1);
      // A tenant the settings did not carry would read nothing, and cost less.
      if (answers[1]?.length === 0) throw new Error("the raw read found no rows");
    } finally {
      c.release();
    }
  };
  const fingerprint = createFingerprinter(randomBytes(32));
  const CREATE_ANSWER =
    "insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer) values ($1, $2, $3, $4, $5) on conflict do nothing returning version";
  /**
   * A save's transaction with none of North's own machinery: BEGIN, the token's proof, the
   * create (written together, the create flushed), then, once it answered, the audit row and
   * COMMIT; with `batch`, each of the two writes with one Sync (BEGIN and the proof batched
   * inside the transaction, the audit row batched before COMMIT), as decision 045 sends a save.
   */
  const rawSave = async (
    { tenant, proof }: { tenant: Tenant; proof: ApiTokenProof },
    n: number,
    batch: boolean,
  ) => {
    const enter = enterStatement(tenant, proof);
    const inBatch = batch ? { batch: true, transaction: true, simple: false } : {};
    const c = await app.client.reserve();
    try {
      const opened = [
        c.unsafe("begin", [], inBatch as never).execute(),
        c
          .unsafe(enter.text, enter.params as never[], { prepare: true, ...inBatch } as never)
          .execute(),
      ];
      const [created] = await c.unsafe(
        CREATE_ANSWER,
        [
          tenant.organizationId,
          tenant.userId,
          `raw:${n}:${Math.random()}`,
          `Q ${n}?`,
          "A raw answer.",
        ],
        { prepare: true },
      );
      await Promise.all(opened);
      if (!created) throw new Error("the raw save created nothing");
      const audit = auditStatement({
        tool: "north__working_profile_answer",
        outcome: "created",
        tokenId: proof.tokenId,
        requestId: crypto.randomUUID(),
        target: fingerprint(`Q ${n}?`),
      });
      await Promise.all([
        c.unsafe(audit.text, audit.params as never[], { prepare: true, ...inBatch } as never),
        c.unsafe("commit", [], { simple: false } as never),
      ]);
    } finally {
      c.release();
    }
  };
  /**
   * Each call's number, never reused in a run: a save's question is new every time (created, as
   * the bench's saves are), where numbers restarting with every slice had made most of them noops
   * (a third round trip, and a select built by Drizzle).
   */
  let sequence = 0;
  const callersOf = (workload: string) =>
    workload.includes("save") ? tokens.slice(CALLERS) : tokens.slice(0, CALLERS);
  const loop = async (workload: string, until: number) => {
    let calls = 0;
    await Promise.all(
      callersOf(workload).map(async (token) => {
        while (performance.now() < until) {
          await call(workload, token, sequence++);
          calls++;
        }
      }),
    );
    return calls;
  };
  // PostgreSQL's CPU per call too (bench-cpu.ts): the same statements cost it less per call at
  // a higher rate, so compare it between workloads of one run with their rates in view.
  const pgCpu = await postgresCpu(owner.client);
  const measured = new Map(
    workloads.map((w) => [w, { calls: 0, user: 0, system: 0, s: 0, postgres: 0 }]),
  );
  for (const w of workloads) await loop(w, performance.now() + 2_000);
  for (let round = 0; round < seconds; round++) {
    for (const [w, m] of measured) {
      await loop(w, performance.now() + 100);
      const cpu = process.cpuUsage();
      const postgres0 = pgCpu?.();
      const t0 = performance.now();
      m.calls += await loop(w, performance.now() + 1_000);
      const used = process.cpuUsage(cpu);
      const postgres1 = pgCpu?.();
      m.s += (performance.now() - t0) / 1000;
      m.user += used.user;
      m.system += used.system;
      if (postgres0 !== undefined && postgres1 !== undefined) m.postgres += postgres1 - postgres0;
    }
  }
  for (const [w, m] of measured) {
    console.log(
      `${w}${modern ? " (2026-07-28)" : ""}: ${m.calls} calls in ${m.s.toFixed(1)} s, ${(m.calls / m.s).toFixed(0)}/s, ${((m.user + m.system) / m.calls).toFixed(0)} µs CPU per call (user ${(m.user / m.calls).toFixed(0)}, sys ${(m.system / m.calls).toFixed(0)})${pgCpu ? `, PostgreSQL ${((m.postgres * 1e6) / m.calls).toFixed(0)} µs` : ""}`,
    );
  }
  const { rss, heapUsed } = process.memoryUsage();
  console.log(
    `server process: ${(rss / 2 ** 20).toFixed(0)} MB resident, ${(heapUsed / 2 ** 20).toFixed(0)} MB of JavaScript heap`,
  );
  await app.client.end();
  await owner.client.end();
} finally {
  await bench.drop();
}
