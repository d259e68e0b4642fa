/**
 * `bun run bench:recall`: recall@5 of full-text recall on the bilingual retrieval set
 * (test/fixtures/retrieval/, decision 018), per language and overall. Target ≥ 0.8.
 *
 * Each language's memories go into a fresh organisation of that language through the real
 * `north__memory_remember` tool, in the set's order (so the first is the oldest); each query
 * goes through the real `north__memory_recall` tool (no embedder: full text, limit 5). A query
 * scores the share of its expected memories found in the five returned (of at most five).
 *
 * For comparison, on the same rows and with the same ranking, the run also scores SQL variants
 * that take the change apart: the search before decision 018 (`simple` configuration, websearch
 * syntax, every word) and the language-aware query, each with every word only and with the
 * places left filled by some-word matches (the last one is what the tool runs).
 *
 * Env: DATABASE_URL (else a disposable embedded PostgreSQL 18). `--json` prints the figures as
 * one JSON object; `--misses` lists every query that scored below 1.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  addMember,
  connectDatabase,
  createOrganization,
  type OrganizationLanguage,
  setOrganizationLanguage,
  withOrganization,
} from "@north/db";
import { buildMcpApp, createLogger, createRateLimiter, type Principal } from "@north/mcp-server";
import { createBenchDatabase } from "./bench-database.ts";

interface FixtureMemory {
  id: string;
  language: OrganizationLanguage;
  kind: "fact" | "observation";
  subject_type?: string;
  subject_id?: string;
  body: string;
}

interface FixtureQuery {
  id: string;
  language: OrganizationLanguage;
  query: string;
  expected: string[];
}

const LIMIT = 5;
const LANGUAGES: readonly OrganizationLanguage[] = ["fr", "en"];
const FIXTURE = path.join(import.meta.dirname, "../test/fixtures/retrieval");
const json = process.argv.includes("--json");
const showMisses = process.argv.includes("--misses");

const memories = JSON.parse(
  await readFile(path.join(FIXTURE, "memories.json"), "utf8"),
) as FixtureMemory[];
const queries = JSON.parse(
  await readFile(path.join(FIXTURE, "queries.json"), "utf8"),
) as FixtureQuery[];

/** The share of `expected` among the first LIMIT of `got`, out of at most LIMIT expected. */
const recallAt = (expected: string[], got: string[]) =>
  expected.filter((id) => got.slice(0, LIMIT).includes(id)).length /
  Math.min(expected.length, LIMIT);
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / (values.length || 1);

const bench = await createBenchDatabase("north_bench_recall");

try {
  const owner = connectDatabase(bench.ownerUrl, { max: 2 });
  const app = connectDatabase(bench.appUrl, { max: 4 });
  const principals = new Map<string, Principal>();
  const mcp = buildMcpApp({
    db: app.db,
    resolvePrincipal: async (request) =>
      principals.get((request.headers.get("authorization") ?? "").replace(/^Bearer /, "")) ?? null,
    limiter: createRateLimiter({
      writesPerMinute: 1e9,
      readsPerMinute: 1e9,
      protocolRequestsPerMinute: 1e9,
    }),
    logger: createLogger({ level: "warn" }),
    auditKey: randomBytes(32).toString("hex"),
  });

  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown>;
  };

  const VARIANTS = ["north", "before", "beforeFilled", "everyWord", "sqlNorth"] as const;
  type Variant = (typeof VARIANTS)[number];
  const scores = Object.fromEntries(
    VARIANTS.map((v) => [v, { fr: [] as number[], en: [] as number[] }]),
  ) as Record<Variant, Record<OrganizationLanguage, number[]>>;
  const misses: string[] = [];
  for (const language of LANGUAGES) {
    const org = await createOrganization(owner.db, { name: `Retrieval ${language}` });
    await withOrganization(owner.db, org.id, (tx) =>
      setOrganizationLanguage(tx, { organizationId: org.id, language }),
    );
    const lawyer = await addMember(owner.db, {
      organizationId: org.id,
      email: `lawyer-${language}@example.test`,
    });
    const token = `bench_${randomBytes(12).toString("hex")}`;
    principals.set(token, {
      organizationId: org.id,
      userId: lawyer.userId,
      role: "member",
      scopes: ["memory:read", "memory:write"],
      tokenId: null,
    });
    const client = new Client({ name: "north-bench-recall", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
        fetch: async (url, init) => mcp.request(String(url), init as RequestInit),
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );

    const fixtureId = new Map<string, string>();
    for (const m of memories.filter((x) => x.language === language)) {
      const stored = await call(client, "north__memory_remember", {
        kind: m.kind,
        body: m.body,
        origin: "stated",
        ...(m.subject_type ? { subject_type: m.subject_type, subject_id: m.subject_id } : {}),
      });
      if (stored.outcome !== "created") throw new Error(`${m.id}: ${String(stored.outcome)}`);
      fixtureId.set(String(stored.memory_id), m.id);
    }

    // The same rows ranked by other queries, as SQL on the owner connection: before decision 018
    // (`simple`, websearch syntax; `some` turns its ANDs into ORs) and the language-aware query.
    const before = async (q: string, some: boolean, exclude: string[] = []) => {
      const rows = await owner.client<{ id: string }[]>`
        select id from memories,
          lateral (select to_tsvector('simple'::regconfig, coalesce(body, '')) as v) d,
          (select case when ${some} then replace(websearch_to_tsquery('simple'::regconfig, ${q})::text, ' & ', ' | ')::tsquery
                  else websearch_to_tsquery('simple'::regconfig, ${q}) end as q) t
        where organization_id = ${org.id} and v @@ q and not (id = any(${exclude}::uuid[]))
        order by ts_rank(v, q) desc, created_at desc limit ${LIMIT - exclude.length}`;
      return rows.map((r) => r.id);
    };
    const languageAware = async (q: string, some: boolean, exclude: string[] = []) => {
      const rows = await owner.client<{ id: string }[]>`
        select id from memories, (select public.north_search_query(${language}, ${q}, ${!some}, public.north_tenant_prefix(${org.id})) as q) t
        where organization_id = ${org.id} and search @@ q and not (id = any(${exclude}::uuid[]))
        order by ts_rank(search, q) desc, created_at desc limit ${LIMIT - exclude.length}`;
      return rows.map((r) => r.id);
    };
    /** Every-word matches, then (when `fill`) some-word matches in the places left. */
    const ranked = async (
      search: (q: string, some: boolean, exclude?: string[]) => Promise<string[]>,
      q: string,
      fill: boolean,
    ) => {
      const all = await search(q, false);
      const ids = fill && all.length < LIMIT ? [...all, ...(await search(q, true, all))] : all;
      return ids.map((id) => fixtureId.get(id) ?? id);
    };

    for (const q of queries.filter((x) => x.language === language)) {
      const recalled = await call(client, "north__memory_recall", { query: q.query, limit: LIMIT });
      if (recalled.mode !== "fulltext") throw new Error(`${q.id}: mode ${String(recalled.mode)}`);
      const got = (recalled.memories as { memory_id: string }[]).map(
        (m) => fixtureId.get(m.memory_id) ?? m.memory_id,
      );
      const score = recallAt(q.expected, got);
      scores.north[language].push(score);
      if (score < 1) {
        misses.push(
          `${q.id} ${JSON.stringify(q.query)} → ${got.join(", ") || "nothing"} (expected ${q.expected.join(", ")}; ${score.toFixed(2)})`,
        );
      }
      for (const [name, search, fill] of [
        ["before", before, false],
        ["beforeFilled", before, true],
        ["everyWord", languageAware, false],
        ["sqlNorth", languageAware, true],
      ] as const) {
        scores[name][language].push(recallAt(q.expected, await ranked(search, q.query, fill)));
      }
    }
    await client.close();
  }

  const figures = Object.fromEntries(
    Object.entries(scores).map(([name, byLanguage]) => [
      name,
      {
        fr: mean(byLanguage.fr),
        en: mean(byLanguage.en),
        overall: mean([...byLanguage.fr, ...byLanguage.en]),
      },
    ]),
  ) as Record<Variant, { fr: number; en: number; overall: number }>;
  const counts = Object.fromEntries(
    LANGUAGES.map((l) => [
      l,
      {
        memories: memories.filter((m) => m.language === l).length,
        queries: queries.filter((q) => q.language === l).length,
      },
    ]),
  );
  if (json) {
    console.log(JSON.stringify({ limit: LIMIT, counts, figures, misses }));
  } else {
    console.log(
      `\nRecall@${LIMIT} on test/fixtures/retrieval (fr: ${counts.fr?.memories} memories, ${counts.fr?.queries} queries; en: ${counts.en?.memories} memories, ${counts.en?.queries} queries), PostgreSQL at ${bench.embedded ? "embedded" : "DATABASE_URL"}\n`,
    );
    console.log("| search | fr | en | overall |");
    console.log("|---|---|---|---|");
    const row = (label: string, f: { fr: number; en: number; overall: number }) =>
      console.log(
        `| ${label} | ${f.fr.toFixed(3)} | ${f.en.toFixed(3)} | ${f.overall.toFixed(3)} |`,
      );
    row("before: `simple`, every word (SQL)", figures.before);
    row("`simple`, every word, then some (SQL)", figures.beforeFilled);
    row("language-aware, every word only (SQL)", figures.everyWord);
    row("language-aware, every word, then some (SQL)", figures.sqlNorth);
    row("**North: `north__memory_recall`**", figures.north);
    const pass = figures.north.overall >= 0.8;
    console.log(`\nTarget recall@${LIMIT} ≥ 0.8: ${pass ? "PASS" : "FAIL"}.`);
    if (showMisses) console.log(`\nBelow 1:\n${misses.join("\n")}`);
  }
  await app.close();
  await owner.close();
} finally {
  await bench.drop();
}
