/**
 * The `scale` workload of `bun run bench` (BENCH_ONLY=scale): full-text recall in one
 * organisation as it grows to 10,000, 100,000 and 1,000,000 live memories (BENCH_SCALE_SIZES),
 * North beside pgbench running the same SQL at each size, so the flat cost of decision 021 shows
 * as figures rather than a claim.
 *
 * North runs its product path: API tokens resolved by `createAuthResolver`, the real app, the
 * tenant gate, the recall tool (fenced block, audit row). Queries rotate through three
 * selectivities, so neither of the planner's two paths is favoured: a common word (`termN`, in 4%
 * of memories), a middling one (`matterN`, 0.1%) and a unique one (`refN`, one memory).
 *
 * With matters (SPEC §5a): 300 matters, a tenth restricted, every tenth memory in one, so words
 * such as `term0` occur only in matters' memories, as a client's name does (decision 039). At
 * each size, a firm-wide remember into the same organisation is measured the same way, North
 * beside pgbench running the statements it sends.
 */
import type { Database } from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createLogger,
  createRateLimiter,
  startHttpServer,
} from "@north/mcp-server";
import type { Sql } from "postgres";
import { ADVISORY_LOCKS } from "../packages/db/src/advisory-locks.ts";

export interface ScaleFigures {
  callsPerSecond: number;
  p50: number;
  p99: number;
}

export interface ScaleBenchOptions {
  /** Owner connection: seeds memories, vacuums. */
  owner: Sql;
  /** The app pool (app login role), as `north serve` configures it. */
  db: Database;
  auditKey: string;
  organizationId: string;
  authorId: string;
  /** One API token per client, members of `organizationId`. */
  apiTokens: string[];
  sizes: number[];
  /**
   * North's clients of `north.workload` against `north.url` beside pgbench running `raw.script`,
   * by the bench's method (bench.ts `compare`: the server warmed by unmeasured calls, then
   * rounds of each side in turn; rates averaged, latencies the rounds' median).
   */
  compare(
    label: string,
    north: {
      url: string;
      workload: "recall-scale" | "remember-scale";
      tokens: string[];
      env: Record<string, string>;
    },
    raw: { name: string; script: string },
  ): Promise<{ north: ScaleFigures; pgbench: ScaleFigures }>;
  /**
   * BEGIN and the token's proof that sets the tenant, as the pgbench scripts open a transaction:
   * client `:client_id` for the lawyer whose token North's client of the same index holds.
   */
  tenantPrelude: string;
  /** The audit insert a recall writes, as SQL. */
  auditInsert: string;
  /** The audit insert a remember writes, as SQL. */
  rememberAuditInsert: string;
}

export interface ScaleResult {
  size: number;
  north: ScaleFigures;
  pgbench: ScaleFigures;
  /** A firm-wide remember into the same organisation (issue 25: the may-see rule on writes). */
  remember: { north: ScaleFigures; pgbench: ScaleFigures };
}

/** The body of memory number `g` (SQL expression over `g`). */
const BODY = `'Memory note ' || g || ' about term' || (g % 50) || ' and term' || ((g * 7) % 50) || ' for matter' || (g % 1000) || ', reference ref' || g`;

export async function benchRecallScale(options: ScaleBenchOptions): Promise<ScaleResult[]> {
  const app = buildMcpApp({
    db: options.db,
    resolvePrincipal: createAuthResolver(options.db),
    limiter: createRateLimiter({
      writesPerMinute: 1e9,
      readsPerMinute: 1e9,
      protocolRequestsPerMinute: 1e9,
    }),
    logger: createLogger({ level: "warn" }),
    auditKey: options.auditKey,
    // The memories are one firm's, so are the eight clients: a replica serving that firm is
    // configured to let it run as many transactions as it has clients (NORTH_TENANT_CONCURRENCY),
    // or the bench would measure the fairness gate (decision 016), not recall's cost.
    tenantConcurrency: { perOrganization: options.apiTokens.length, maxWaitMs: 5_000 },
  });
  const server = await startHttpServer(app.fetch, { port: 0, hostname: "127.0.0.1" });
  const url = `http://127.0.0.1:${server.port}/mcp`;
  const results: ScaleResult[] = [];
  const matters = await hasMatters(options.owner);
  let seeded = 0;
  // A few hundred matters, a tenth of them restricted (the recalling lawyer on none of their teams).
  if (matters) {
    await options.owner.unsafe(
      `insert into matters (organization_id, reference, name, access)
       select $1, 'BENCH-' || g, 'Bench matter ' || g, case when g % 10 = 0 then 'restricted' else 'open' end
       from generate_series(0, ${MATTERS - 1}) g`,
      [options.organizationId],
    );
  }
  try {
    for (const size of [...options.sizes].sort((a, b) => a - b)) {
      // Memory g is g seconds newer than memory g - 1, so the newest are the highest numbers.
      const started = performance.now();
      // SPEC §5a on the hot path: every tenth memory belongs to one of the firm's matters.
      await options.owner.unsafe(
        `insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at, created_at${matters ? ", matter_id" : ""})
         select $1, $2, 'fact', 'stated', ${BODY}, 'bench', now() + interval '90 days',
                now() - interval '60 days' + make_interval(secs => g)
                ${matters ? `, case when g % 10 = 0 then (select mt.id from matters mt where mt.organization_id = $1 and mt.reference = 'BENCH-' || (g / 10) % ${MATTERS}) end` : ""}
         from generate_series($3::integer, $4::integer) g`,
        [options.organizationId, options.authorId, seeded + 1, size],
      );
      seeded = size;
      // As autovacuum leaves a table: the GIN pending list merged, statistics fresh.
      await options.owner.unsafe("vacuum analyze memories");
      await prewarm(options.owner);
      console.error(
        `scale: ${size} memories seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
      const env = { BENCH_SCALE_SIZE: String(size) };
      const recall = await options.compare(
        `recall at ${size.toLocaleString("en")}`,
        { url, workload: "recall-scale", tokens: options.apiTokens, env },
        { name: `scale-${size}`, script: pgbenchScript(options, size, matters) },
      );
      const remember = await options.compare(
        `remember at ${size.toLocaleString("en")}`,
        { url, workload: "remember-scale", tokens: options.apiTokens, env },
        { name: `remember-${size}`, script: rememberScript(options, matters) },
      );
      results.push({ size, north: recall.north, pgbench: recall.pgbench, remember });
    }
  } finally {
    await server.close();
  }
  return results;
}

/**
 * Loads the memories table and its indexes into shared buffers, as a server in steady state
 * holds its working set. The bulk insert and VACUUM above read through small ring buffers and
 * leave almost nothing cached, so without this the first workload measured (North) would pay
 * for warming the cache and the second (pgbench) would not. Needs the `pg_prewarm` extension;
 * on a server without it the cache warms during the runs, and the bench says so.
 */
async function prewarm(owner: Sql): Promise<void> {
  try {
    await owner.unsafe("create extension if not exists pg_prewarm");
    await owner.unsafe(
      `select pg_prewarm(c.oid) from pg_class c
       where c.oid = 'memories'::regclass
          or c.oid in (select indexrelid from pg_index where indrelid = 'memories'::regclass)`,
    );
  } catch (error) {
    console.error(`scale: no pg_prewarm (${(error as Error).message}); the cache warms as it runs`);
  }
}

/**
 * The SQL one recall runs, for pgbench: the ranked search joined to the rows it names (one
 * statement, as North sends it), then the audit insert.
 */
/** The firm's matters in the scale bench (SPEC §5a: "a few hundred"). */
const MATTERS = 300;

function pgbenchScript(options: ScaleBenchOptions, size: number, matters: boolean): string {
  const tenant = "nullif(current_setting('north.organization_id', true), '')::uuid";
  // Before matters (an older commit): the candidate function had no matter argument, the live
  // condition no hold, and recall no firm-wide filter.
  const scope = matters
    ? {
        matter: ", NULL::uuid",
        column: ", m.matter_id",
        live: "(m.expires_at > now() OR m.matter_id = ANY ((SELECT public.north_held_matters())::uuid[])) AND (m.matter_id IS NULL OR m.matter_id = NULL::uuid)",
      }
    : { matter: "", column: "", live: "m.expires_at > now()" };
  return `\\set k random(0, 2)
\\set w random(0, 49)
\\set m random(0, 999)
\\set r random(1, ${size})
${options.tenantPrelude}
SELECT m.id, m.kind, m.origin, m.body, m.subject_type, m.subject_id, m.author_id, m.created_at, m.expires_at${scope.column} FROM memories m JOIN public.memory_fulltext_candidates((array['term' || :w, 'matter' || :m, 'ref' || :r])[:k + 1], NULL, NULL, 5, 200${scope.matter}) WITH ORDINALITY AS c(cid, rank, n) ON c.cid = m.id WHERE m.organization_id = ${tenant} AND m.forgotten_at IS NULL AND m.purged_at IS NULL AND m.superseded_by IS NULL AND ${scope.live} ORDER BY c.n;
${options.auditInsert}
COMMIT;
`;
}

/** Whether the schema has matters (SPEC §5a): the bench also runs at commits from before them. */
async function hasMatters(owner: Sql): Promise<boolean> {
  const rows = await owner.unsafe(
    "select 1 from information_schema.columns where table_name = 'memories' and column_name = 'matter_id'",
  );
  return rows.length > 0;
}

/**
 * The SQL one firm-wide remember runs (memories/remember.ts, no subject, no supersedes), for
 * pgbench: the identity's advisory lock, the idempotence look-up, the insert, the audit row.
 * Without matters in the schema (an older commit), without its matter conditions.
 */
function rememberScript(options: ScaleBenchOptions, matters: boolean): string {
  const tenant = "nullif(current_setting('north.organization_id', true), '')::uuid";
  const user = "nullif(current_setting('north.user_id', true), '')::uuid";
  const body = "'Bench memory ' || :k::bigint || ' about term' || (:k::bigint % 50)";
  // remember.ts's identity, `org:user:kind:origin:subject[:matter]`, spelt with `':'` alone:
  // pgbench reads `:name` as a variable even inside a string literal.
  const identity = [`${tenant}::text`, `${user}::text`, "'fact'", "'stated'", "''"]
    .concat(matters ? ["''"] : [])
    .join(" || ':' || ");
  const held = matters
    ? " OR m.matter_id = ANY ((SELECT public.north_held_matters())::uuid[])"
    : "";
  return `\\set k random(1, 2000000000)
${options.tenantPrelude}
SELECT pg_advisory_xact_lock(hashtextextended(${identity} || ':' || md5(${body}), ${ADVISORY_LOCKS.rememberIdentitySeed}));
SELECT m.id, m.expires_at FROM memories m WHERE m.organization_id = ${tenant} AND m.author_id = ${user} AND m.kind = 'fact' AND m.origin = 'stated'${matters ? " AND m.matter_id IS NULL" : ""} AND m.subject_fingerprint IS NULL AND md5(m.body) = md5(${body}) AND m.body = ${body} AND m.forgotten_at IS NULL AND m.purged_at IS NULL AND m.superseded_by IS NULL AND (m.expires_at > now()${held}) AND m.created_at > now() - make_interval(hours => 24) ORDER BY m.created_at DESC LIMIT 1;
INSERT INTO memories (organization_id, author_id, kind, origin, body, subject_type, subject_id, subject_fingerprint,${matters ? " matter_id," : ""} run_id, embedding, embedding_model, language, expires_at) VALUES (${tenant}, ${user}, 'fact', 'stated', ${body}, NULL, NULL, NULL,${matters ? " NULL," : ""} 'bench', NULL, NULL, (SELECT o.language FROM organizations o WHERE o.id = ${tenant}), now() + make_interval(days => 90)) RETURNING id, expires_at;
${options.rememberAuditInsert}
COMMIT;
`;
}
