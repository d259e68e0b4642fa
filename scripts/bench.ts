/**
 * `bun run bench`: North's MCP server against the same transactions as raw SQL through pgbench,
 * measured in the same run on the same PostgreSQL, and reported as ratios (the machines are
 * shared and noisy, so only ratios mean anything).
 *
 * For each workload (save: an id-less create; read: the whole profile; recall: a full-text recall
 * over 100,000 memories of one organization), 8 SDK clients in a
 * separate process call the tool over loopback HTTP for BENCH_SECONDS, each with a real API
 * token; then pgbench runs, with 8 clients on the app login role, the SQL one such call
 * executes once North remembers the token (decision 036): BEGIN, the token's proof that sets the
 * tenant (`enter_as_api_token`), the store's statement, the audit insert, COMMIT.
 *
 * The `oauth` workload (scripts/bench-oauth.ts) compares the same profile read with an API token
 * and with an OAuth access token, against a server on the product's auth path.
 *
 * Save, read, recall and, at each of scale's sizes, its recall and remember run in BENCH_ROUNDS
 * rounds (default 3), North then pgbench in each, so a change of the shared machine's speed
 * during the run weighs on both sides alike; each figure is the mean of its rounds (rates) or
 * their median (latencies), and the ratio is of the means (`compare`). Before its first round,
 * each workload runs unmeasured for BENCH_SERVER_WARMUP_SECONDS (default 20), so the rounds
 * measure the server's steady state rather than its JIT compiling the path.
 *
 * Env: BENCH_SECONDS (default 10), BENCH_CLIENTS (default 8), BENCH_ROUNDS (default 3),
 * BENCH_SERVER_WARMUP_SECONDS (default 20), DATABASE_URL (else embedded),
 * BENCH_ONLY (a comma-separated subset of dos, save, read, recall, scale, oauth), BENCH_SCALE_SIZES
 * (default 10000,100000,1000000).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { connectDatabase, hashToken } from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createLogger,
  createRateLimiter,
  startHttpServer,
} from "@north/mcp-server";
import {
  ALLOCATOR_KEEPS_PAGES,
  ALLOCATOR_SETTING,
  allocatorKeepsPages,
} from "../apps/north/src/allocator.ts";
import { type AroundTheRound, measureRound, postgresBackground, postgresCpu } from "./bench-cpu.ts";
import { createBenchDatabase } from "./bench-database.ts";
import { ATTACKERS, seedBench } from "./bench-fixtures.ts";
import { benchOAuth, type ReadResult } from "./bench-oauth.ts";
import { benchRecallScale } from "./bench-scale.ts";
import { benchNumber, benchNumbers } from "./bench-settings.ts";

const SECONDS = benchNumber("BENCH_SECONDS", 10, { min: 1 });
const ROUNDS = benchNumber("BENCH_ROUNDS", 3, { min: 1, integer: true });
const CLIENTS = benchNumber("BENCH_CLIENTS", 8, { min: 1, integer: true });
/**
 * Unmeasured calls of each workload before its first round. The server's JIT goes on compiling a
 * workload's path for some 20 s of calls (docs/benchmarks.md, "the server's warm-up"); each
 * round's own 2 s warm-up (bench-clients.ts) covers its fresh client process, not that.
 */
const SERVER_WARMUP_SECONDS = benchNumber("BENCH_SERVER_WARMUP_SECONDS", 20, { min: 0 });
/** The server's app pool (`NORTH_DB_POOL_MAX`, whose default `north serve` runs). */
const POOL_MAX = benchNumber("BENCH_POOL_MAX", 10, { min: 1, integer: true });
const AUDIT_KEY = randomBytes(32).toString("hex");

interface Figures {
  callsPerSecond: number;
  p50: number;
  p99: number;
}

/**
 * A round's CPU per call (ms) by process, the machine's idle and stolen shares, and PostgreSQL's
 * background work during it (bench-cpu.ts).
 */
interface CallCpu {
  server?: number;
  clients?: number;
  postgres?: number;
  /** The machine's context switches per call. */
  switches?: number;
  around: AroundTheRound;
}

/**
 * The environment of what the bench starts (the clients, which stand for the hosts, and pgbench):
 * the bench's own without the allocator setting `bun run bench` gives the server it hosts
 * (decision 046), so only North's server runs as `north serve` does.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { [ALLOCATOR_SETTING]: _server, ...inherited } = process.env;
  return { ...inherited, ...env };
}

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: childEnv(env) });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}: ${err}`)),
    );
  });
}

/** Seconds of CPU over `count` calls, in ms per call. */
const perCall = (seconds: number | undefined, count: number) =>
  perCount(seconds === undefined ? undefined : seconds * 1e3, count);

/** A count over `calls` calls, per call. */
function perCount(count: number | undefined, calls: number): number | undefined {
  return count === undefined || !(calls > 0) ? undefined : count / calls;
}

/** A round's CPU per call for the log: what was measured, in ms, and the idle share. */
function describeCpu(cpu: CallCpu): string {
  const { idle, steal, checkpoints, autovacuums, backgroundCpu } = cpu.around;
  const parts = [
    cpu.server === undefined ? undefined : `server ${cpu.server.toFixed(2)} ms`,
    cpu.clients === undefined ? undefined : `client ${cpu.clients.toFixed(2)} ms`,
    cpu.postgres === undefined ? undefined : `PostgreSQL ${cpu.postgres.toFixed(2)} ms`,
    cpu.switches === undefined ? undefined : `${cpu.switches.toFixed(1)} context switches`,
    idle === undefined ? undefined : `machine ${(idle * 100).toFixed(0)}% idle`,
    steal === undefined ? undefined : `${(steal * 100).toFixed(0)}% stolen`,
    checkpoints ? `${checkpoints} checkpoint(s)` : undefined,
    autovacuums ? `${autovacuums} autovacuum/analyze run(s)` : undefined,
    ...Object.entries(backgroundCpu ?? {})
      // Under 10 ms is one clock tick of /proc or nothing.
      .filter(([, seconds]) => seconds >= 0.01)
      .map(([kind, seconds]) => `${kind} ${(seconds * 1e3).toFixed(0)} ms CPU`),
  ];
  return parts.filter(Boolean).join(", ");
}

// The server runs in this process, so it runs its allocator as `north serve` does only when the
// bench was started as `bun run bench` (decision 046).
if (!allocatorKeepsPages(process.env[ALLOCATOR_SETTING])) {
  console.error(
    `warning: ${ALLOCATOR_SETTING} is not ${ALLOCATOR_KEEPS_PAGES}, so the server in this process runs its allocator unlike \`bun run north serve\` (decision 046): use \`bun run bench\``,
  );
}
const bench = await createBenchDatabase("north_bench");
const { scratch, ownerUrl, appUrl } = bench;

try {
  const owner = connectDatabase(ownerUrl, { max: 2 });
  const seeded = await seedBench(owner, CLIENTS);
  const { cohorts, apiTokens, credentials } = seeded;
  const {
    org: scaleOrg,
    lawyers: scaleLawyers,
    tokens: scaleTokens,
    tokenIds: scaleTokenIds,
    scopes: scaleScopes,
  } = seeded.scale;
  // The same pool settings as `north serve`: ten connections (`BENCH_POOL_MAX`), a 5 s
  // statement timeout.
  // PostgreSQL's own CPU, when it runs on this machine (bench-cpu.ts).
  const pgCpu = await postgresCpu(owner.client);
  const pgBackground = postgresBackground(owner.client);
  const app = connectDatabase(appUrl, {
    max: POOL_MAX,
    applicationName: "north-bench",
    statementTimeoutMs: 5_000,
  });
  const credential = (userId: string) => {
    const found = credentials.get(userId);
    if (!found) throw new Error("a bench lawyer without a token");
    return found;
  };
  const mcp = buildMcpApp({
    db: app.db,
    resolvePrincipal: createAuthResolver(app.db),
    limiter: createRateLimiter({
      writesPerMinute: 1e9,
      readsPerMinute: 1e9,
      protocolRequestsPerMinute: 1e9,
    }),
    logger: createLogger({ level: "warn" }),
    auditKey: AUDIT_KEY,
  });
  const server = await startHttpServer(mcp.fetch, { port: 0, hostname: "127.0.0.1" });
  const mcpUrl = `http://127.0.0.1:${server.port}/mcp`;

  type Workload = "save" | "read" | "recall";
  const clientsAt = (
    url: string,
    workload: string,
    tokens: string[],
    seconds: number,
    env: Record<string, string> = {},
  ) =>
    run(
      "bun",
      [
        path.join(import.meta.dirname, "bench-clients.ts"),
        url,
        workload,
        String(seconds),
        ...tokens,
      ],
      env,
    );
  const clients = (workload: string, cohort: { userId: string }[], seconds = SECONDS) =>
    clientsAt(
      mcpUrl,
      workload,
      cohort.map((m) => credential(m.userId).token),
      seconds,
    );
  /** The last line bench-clients.ts prints: what its calls did. */
  interface ClientSummary {
    calls: number;
    elapsed: number;
    p50: number;
    p99: number;
    errors: number;
    warmupCalls: number;
    cpuSeconds: number;
  }
  const summaryOf = (out: string): ClientSummary =>
    JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
  /** The summary of clients none of whose calls may fail: a failed call ends the bench. */
  const succeeded = (out: string, what: string): ClientSummary => {
    const r = summaryOf(out);
    if (r.errors > 0) throw new Error(`${r.errors} ${what} calls failed`);
    return r;
  };
  let phase = 0;
  const readClients = async (url: string, tokens: string[], seconds: number) => {
    const file = path.join(scratch, `latencies-${phase++}.json`);
    const out = await clientsAt(url, "read", tokens, seconds, { BENCH_LATENCIES_FILE: file });
    const r = summaryOf(out);
    const bySlot = JSON.parse(await readFile(file, "utf8")) as number[][];
    return { errors: r.errors, elapsed: r.elapsed, bySlot } satisfies ReadResult;
  };
  const figuresOf = (r: ClientSummary): Figures & { errors: number } => ({
    callsPerSecond: r.calls / r.elapsed,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
  });
  const figures = (out: string) => figuresOf(summaryOf(out));
  type Measured = Figures & { cpu: CallCpu };
  /**
   * One round of North's side: the clients `runClients` starts (a separate process), with the
   * server's CPU (this process), the clients' and PostgreSQL's per call, and the machine around.
   */
  const measuredClients = async (
    what: string,
    runClients: () => Promise<string>,
  ): Promise<Measured> => {
    const cpuBefore = process.cpuUsage();
    const round = await measureRound(pgCpu, pgBackground);
    const out = await runClients();
    const spent = await round();
    const r = succeeded(out, what);
    const cpu = process.cpuUsage(cpuBefore);
    const calls = r.calls + r.warmupCalls;
    return {
      ...figuresOf(r),
      cpu: {
        server: (cpu.user + cpu.system) / 1e3 / calls,
        clients: (r.cpuSeconds * 1e3) / calls,
        postgres: perCall(spent.postgres, calls),
        switches: perCount(spent.around.switches, calls),
        around: spent.around,
      },
    };
  };
  const sdk = (workload: Workload) =>
    measuredClients(workload, () => clients(workload, cohorts[workload]));

  /** A lawyer as pgbench signs in for them: the token's hash and id, the tenant. */
  interface Signer {
    hash: string;
    tokenId: string;
    organizationId: string;
    userId: string;
    /** The token's scopes joined by spaces, as North's proof sends them. */
    scopes: string;
  }
  const signersOf = (workload: Workload): Signer[] =>
    cohorts[workload].map((m) => ({
      hash: credential(m.userId).hash,
      tokenId: credential(m.userId).id,
      organizationId: m.organizationId,
      userId: m.userId,
      scopes: credential(m.userId).scopes.join(" "),
    }));
  /**
   * A text literal for pgbench's script. pgbench reads `:name` as a variable even inside quotes,
   * so a colon (the scopes') is written as an escape PostgreSQL reads when it parses the
   * statement: the same constant, no work per transaction.
   */
  const literal = (value: string) =>
    value.includes(":") ? `E'${value.replaceAll(":", "\\x3a")}'` : `'${value}'`;
  const list = (values: string[]) => `array[${values.map(literal).join(",")}]`;
  /** Of `values`, one per signer, the one of this pgbench client's lawyer (`:lawyer`). */
  const ofLawyer = (values: string[], type: string) => `(${list(values)}::${type}[])[:lawyer]`;
  /**
   * How North opens a call's transaction for a token it remembers (decision 036): BEGIN, then
   * the token's proof, which sets the tenant. pgbench's client `:client_id` acts for the lawyer
   * whose token North's client of the same index holds: one lawyer per client on both sides.
   */
  const tenantOf = (signers: Signer[]) => `\\set lawyer :client_id + 1
BEGIN;
SELECT public.enter_as_api_token(${ofLawyer(
    signers.map((s) => s.hash),
    "text",
  )}, ${ofLawyer(
    signers.map((s) => s.tokenId),
    "uuid",
  )}, ${ofLawyer(
    signers.map((s) => s.organizationId),
    "uuid",
  )}, ${ofLawyer(
    signers.map((s) => s.userId),
    "uuid",
  )}, 'member', ${ofLawyer(
    signers.map((s) => s.scopes),
    "text",
  )});`;
  const tenant = (workload: Workload) => tenantOf(signersOf(workload));
  const auditRow = (tokenId: string, tool: string, outcome: string, target: boolean) =>
    `INSERT INTO audit_events (organization_id, actor_id, token_id, request_id, tool, outcome, target_fingerprint, target_length) VALUES (nullif(current_setting('north.organization_id', true), '')::uuid, nullif(current_setting('north.user_id', true), '')::uuid, ${tokenId}, gen_random_uuid(), '${tool}', '${outcome}', ${target ? "md5(random()::text) || md5(random()::text), 69" : "NULL, NULL"});`;
  const audit = (workload: Workload, tool: string, outcome: string, target: boolean) =>
    auditRow(
      ofLawyer(
        signersOf(workload).map((s) => s.tokenId),
        "uuid",
      ),
      tool,
      outcome,
      target,
    );
  const scripts = {
    save: `${tenant("save")}
\\set q random(1, 2000000000)
INSERT INTO working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer) VALUES (nullif(current_setting('north.organization_id', true), '')::uuid, nullif(current_setting('north.user_id', true), '')::uuid, 'auto:' || md5(:q::text || random()::text), 'Bench question ' || :q || '?', 'A benchmark answer.') ON CONFLICT DO NOTHING RETURNING version;
${audit("save", "north__working_profile_answer", "created", true)}
COMMIT;
`,
    recall: `${tenant("recall")}
\\set w random(0, 49)
SELECT m.id, m.kind, m.origin, m.body, m.subject_type, m.subject_id, m.author_id, m.created_at, m.expires_at, m.matter_id FROM memories m JOIN public.memory_fulltext_candidates('term' || :w, NULL, NULL, 5, 200, NULL::uuid) WITH ORDINALITY AS c(cid, rank, n) ON c.cid = m.id WHERE m.organization_id = nullif(current_setting('north.organization_id', true), '')::uuid AND m.forgotten_at IS NULL AND m.purged_at IS NULL AND m.superseded_by IS NULL AND (m.expires_at > now() OR m.matter_id = ANY ((SELECT public.north_held_matters())::uuid[])) AND (m.matter_id IS NULL OR m.matter_id = NULL::uuid) ORDER BY c.n;
${audit("recall", "north__memory_recall", "read", false)}
COMMIT;
`,
    read: `${tenant("read")}
SELECT question_id, question_text, answer, version, created_at, updated_at FROM working_profile_answers WHERE organization_id = nullif(current_setting('north.organization_id', true), '')::uuid AND owner_user_id = nullif(current_setting('north.user_id', true), '')::uuid ORDER BY created_at, question_id;
${audit("read", "north__working_profile", "read", false)}
COMMIT;
`,
  };

  const pgbench = (workload: Workload) => pgbenchScript(workload, scripts[workload]);
  async function pgbenchScript(name: string, sql: string): Promise<Measured> {
    const script = path.join(scratch, `${name}.sql`);
    const logDir = path.join(scratch, `log-${name}-${phase++}`);
    await run("mkdir", ["-p", logDir]);
    await writeFile(script, sql);
    const round = await measureRound(pgCpu, pgBackground);
    const out = await run("pgbench", [
      "-n",
      "-M",
      process.env.BENCH_PGBENCH_MODE ?? "prepared",
      "-c",
      String(CLIENTS),
      "-j",
      "2",
      "-T",
      String(SECONDS),
      // A diagnostic, never the method: pgbench held to a rate (transactions per second).
      ...(process.env.BENCH_PGBENCH_RATE ? ["-R", process.env.BENCH_PGBENCH_RATE] : []),
      "-f",
      script,
      "-l",
      "--log-prefix",
      path.join(logDir, "tx"),
      appUrl,
    ]);
    const spent = await round();
    const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
    const transactions = Number(/actually processed: (\d+)/.exec(out)?.[1]);
    const latencies: number[] = [];
    for (const file of await readdir(logDir)) {
      for (const line of (await readFile(path.join(logDir, file), "utf8")).split("\n")) {
        const micros = Number(line.split(" ")[2]);
        if (Number.isFinite(micros) && line) latencies.push(micros / 1000);
      }
    }
    latencies.sort((a, b) => a - b);
    const pick = (q: number) => latencies[Math.floor(q * (latencies.length - 1))] ?? 0;
    return {
      callsPerSecond: tps,
      p50: pick(0.5),
      p99: pick(0.99),
      cpu: {
        clients: perCall(spent.pgbench, transactions),
        postgres: perCall(spent.postgres, transactions),
        switches: perCount(spent.around.switches, transactions),
        around: spent.around,
      },
    };
  }

  /** The rounds' mean rate and median latencies. */
  const across = (rounds: Figures[]): Figures => {
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? 0;
    return {
      callsPerSecond: rounds.reduce((sum, r) => sum + r.callsPerSecond, 0) / rounds.length,
      p50: median(rounds.map((r) => r.p50)),
      p99: median(rounds.map((r) => r.p99)),
    };
  };
  /**
   * North's rate over pgbench's per second of the machine's time the hypervisor did not give to
   * others, over `rounds` (undefined without steal readings): a diagnostic beside the method's
   * ratio, never instead of it. These machines lose up to a third of a round to steal, to one
   * side's rounds more than to the other's.
   */
  const perSecondGiven = (rounds: readonly { north: Measured; raw: Measured }[]) => {
    const mean = (side: "north" | "raw") => {
      let sum = 0;
      for (const r of rounds) {
        const steal = r[side].cpu.around.steal;
        if (steal === undefined) return undefined;
        sum += r[side].callsPerSecond / (1 - steal);
      }
      return sum / rounds.length;
    };
    const north = mean("north");
    const raw = mean("raw");
    return north === undefined || raw === undefined ? undefined : north / raw;
  };

  /**
   * The bench's method for one workload: the server warmed for SERVER_WARMUP_SECONDS by
   * `warmUp`'s unmeasured calls, then ROUNDS rounds of North's side and pgbench's in turn, each
   * round logged with its CPU per call; the rates' mean and the latencies' median over the
   * rounds, and the ratio of the means.
   */
  async function compare(
    label: string,
    sides: {
      warmUp: (seconds: number) => Promise<string>;
      north: () => Promise<Measured>;
      raw: () => Promise<Measured>;
    },
  ): Promise<{ north: Figures; raw: Figures; ratio: number }> {
    if (SERVER_WARMUP_SECONDS > 0) {
      succeeded(await sides.warmUp(SERVER_WARMUP_SECONDS), `${label} warm-up`);
    }
    const rounds: { north: Measured; raw: Measured }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const north = await sides.north();
      const raw = await sides.raw();
      const given = perSecondGiven([{ north, raw }]);
      console.error(
        `${label} round ${round + 1}: North ${north.callsPerSecond.toFixed(0)}/s, pgbench ${raw.callsPerSecond.toFixed(0)}/s, ${(north.callsPerSecond / raw.callsPerSecond).toFixed(2)}×${given === undefined ? "" : ` (${given.toFixed(2)}× per second given)`}; CPU per call: North ${describeCpu(north.cpu)}; pgbench ${describeCpu(raw.cpu)}`,
      );
      rounds.push({ north, raw });
    }
    const north = across(rounds.map((r) => r.north));
    const raw = across(rounds.map((r) => r.raw));
    const ratio = north.callsPerSecond / raw.callsPerSecond;
    const given = perSecondGiven(rounds);
    if (given !== undefined) {
      console.error(
        `${label}: ${given.toFixed(2)}× per second the hypervisor gave (the method's ratio: ${ratio.toFixed(2)}×)`,
      );
    }
    return { north, raw, ratio };
  }

  /**
   * Another organization's profile reads, alone and then while 12 attackers send the longest
   * recall queries allowed, back to back (bounded by SECONDS). The ratio is under attack / alone.
   */
  const denialOfService = async () => {
    const alone = figures(await clients("read", cohorts.victim));
    const attack = clients("attack", cohorts.attack, SECONDS + 2);
    await new Promise((r) => setTimeout(r, 1_000));
    const underAttack = figures(await clients("read", cohorts.victim));
    const attackers = figures(await attack);
    return { alone, underAttack, attackers };
  };

  const rows: string[] = [];
  const only = process.env.BENCH_ONLY?.split(",");
  if (only?.includes("dos") || !only) {
    const dos = await denialOfService();
    console.log(
      `\nDenial of service: another organization's reads (2 clients), alone and under ${ATTACKERS} attackers sending 1,000-character recall queries, ${SECONDS} s each\n`,
    );
    console.log("| reads | calls/s | p50 ms | p99 ms | errors |");
    console.log("|---|---|---|---|---|");
    for (const [label, f] of [
      ["alone", dos.alone],
      ["under attack", dos.underAttack],
    ] as const) {
      console.log(
        `| ${label} | ${f.callsPerSecond.toFixed(0)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${f.errors} |`,
      );
    }
    console.log(
      `\nattackers: ${dos.attackers.callsPerSecond.toFixed(0)} calls/s, p50 ${dos.attackers.p50.toFixed(0)} ms, p99 ${dos.attackers.p99.toFixed(0)} ms, ${dos.attackers.errors} errors; p99 ratio under attack / alone: **${(dos.underAttack.p99 / dos.alone.p99).toFixed(2)}×** (target: p99 under attack < 500 ms)`,
    );
  }
  for (const workload of ["save", "read", "recall"] as const) {
    if (only && !only.includes(workload)) continue;
    const { north, raw, ratio } = await compare(workload, {
      // The same calls as the rounds', by the same lawyers; nothing of them is measured.
      warmUp: (seconds) => clients(workload, cohorts[workload], seconds),
      north: () => sdk(workload),
      raw: () => pgbench(workload),
    });
    rows.push(
      `| ${workload} | ${north.callsPerSecond.toFixed(0)} | ${north.p50.toFixed(2)} | ${north.p99.toFixed(2)} | ${raw.callsPerSecond.toFixed(0)} | ${raw.p50.toFixed(2)} | ${raw.p99.toFixed(2)} | **${ratio.toFixed(2)}×** |`,
    );
  }
  if (rows.length > 0) {
    console.log(
      `\nNorth MCP vs raw SQL (pgbench), ${CLIENTS} clients, ${ROUNDS} rounds of ${SECONDS} s each, PostgreSQL at ${bench.embedded ? "embedded" : "DATABASE_URL"}\n`,
    );
    console.log(
      "| workload | North calls/s | p50 ms | p99 ms | pgbench tx/s | p50 ms | p99 ms | ratio |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
  }

  if (only?.includes("scale") || !only) {
    const sizes = benchNumbers("BENCH_SCALE_SIZES", [10_000, 100_000, 1_000_000], {
      min: 1,
      integer: true,
    });
    // North's scale clients hold one token each, in this order (bench-fixtures.ts).
    const scaleSigners: Signer[] = scaleLawyers.map((m, i) => ({
      hash: hashToken(scaleTokens[i] ?? ""),
      tokenId: scaleTokenIds[i] ?? "",
      organizationId: scaleOrg.id,
      userId: m.userId,
      scopes: (scaleScopes[i] ?? []).join(" "),
    }));
    const scaleTokenId = ofLawyer(
      scaleSigners.map((s) => s.tokenId),
      "uuid",
    );
    const scaled = await benchRecallScale({
      owner: owner.client,
      db: app.db,
      auditKey: AUDIT_KEY,
      organizationId: scaleOrg.id,
      authorId: scaleLawyers[0]?.userId ?? "",
      apiTokens: scaleTokens,
      sizes,
      compare: async (label, north, raw) => {
        // Named apart from the module's `run`, which spawns any command.
        const callFor = (seconds: number) =>
          clientsAt(north.url, north.workload, north.tokens, seconds, north.env);
        const compared = await compare(label, {
          warmUp: callFor,
          north: () => measuredClients(label, () => callFor(SECONDS)),
          raw: () => pgbenchScript(raw.name, raw.script),
        });
        return { north: compared.north, pgbench: compared.raw };
      },
      tenantPrelude: tenantOf(scaleSigners),
      auditInsert: auditRow(scaleTokenId, "north__memory_recall", "read", false),
      rememberAuditInsert: auditRow(scaleTokenId, "north__memory_remember", "created", true),
    });
    console.log(
      `\nFull-text recall as one organisation grows (common, middling and unique words in turn), ${CLIENTS} clients, ${ROUNDS} rounds of ${SECONDS} s each: North with API tokens vs the same SQL through pgbench\n`,
    );
    console.log(
      "| memories | North calls/s | p50 ms | p99 ms | pgbench tx/s | p50 ms | p99 ms | ratio |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (const r of scaled) {
      console.log(
        `| ${r.size.toLocaleString("en")} | ${r.north.callsPerSecond.toFixed(0)} | ${r.north.p50.toFixed(2)} | ${r.north.p99.toFixed(2)} | ${r.pgbench.callsPerSecond.toFixed(0)} | ${r.pgbench.p50.toFixed(2)} | ${r.pgbench.p99.toFixed(2)} | **${(r.north.callsPerSecond / r.pgbench.callsPerSecond).toFixed(2)}×** |`,
      );
    }
    console.log(
      `\nA firm-wide remember into the same organisation (north__memory_remember, no embedder), ${CLIENTS} clients, ${ROUNDS} rounds of ${SECONDS} s each: North vs the same SQL through pgbench\n`,
    );
    console.log(
      "| memories | North calls/s | p50 ms | p99 ms | pgbench tx/s | p50 ms | p99 ms | ratio |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (const { size, remember: r } of scaled) {
      console.log(
        `| ${size.toLocaleString("en")} | ${r.north.callsPerSecond.toFixed(0)} | ${r.north.p50.toFixed(2)} | ${r.north.p99.toFixed(2)} | ${r.pgbench.callsPerSecond.toFixed(0)} | ${r.pgbench.p50.toFixed(2)} | ${r.pgbench.p99.toFixed(2)} | **${(r.north.callsPerSecond / r.pgbench.callsPerSecond).toFixed(2)}×** |`,
      );
    }
    const largest = scaled.at(-1);
    if (largest) {
      console.log(
        `\nAt ${largest.size.toLocaleString("en")} memories: p50 ${largest.north.p50.toFixed(1)} ms (target ≤ 20), p99 ${largest.north.p99.toFixed(1)} ms (target ≤ 100): ${largest.north.p50 <= 20 && largest.north.p99 <= 100 ? "PASS" : "FAIL"}.`,
      );
    }
  }

  if (only?.includes("oauth") || !only) {
    const o = await benchOAuth({
      db: app.db,
      auditKey: AUDIT_KEY,
      apiTokens,
      seconds: SECONDS,
      readClients,
    });
    console.log(
      `\nThe same profile read (north__working_profile) with an API token and with an OAuth access token: ${CLIENTS} clients, each alternating its member's two tokens call by call, ${SECONDS} s, one server on the product's auth path\n`,
    );
    console.log("| token | calls | calls/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|---|");
    for (const [label, f] of [
      ["API token", o.api],
      ["OAuth access token", o.oauth],
    ] as const) {
      console.log(
        `| ${label} | ${f.calls} | ${f.callsPerSecond.toFixed(0)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`,
      );
    }
    const difference = o.oauth.p50 - o.api.p50;
    console.log(
      `\np50 difference (OAuth − API): **${difference.toFixed(2)} ms** (95% bootstrap interval ${o.p50DifferenceInterval[0].toFixed(2)} to ${o.p50DifferenceInterval[1].toFixed(2)} ms) — ${difference <= 1 ? "PASS" : "FAIL"} (target ≤ 1 ms).\nResolver alone, in process, one request at a time (wall / CPU per request): API token ${o.resolver.api.wall.toFixed(0)} / ${o.resolver.api.cpu.toFixed(0)} µs, OAuth ${o.resolver.oauth.wall.toFixed(0)} / ${o.resolver.oauth.cpu.toFixed(0)} µs.`,
    );
  }

  await server.close();
  await app.close();
  await owner.close();
} finally {
  await bench.drop();
}
