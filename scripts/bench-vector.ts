/**
 * `bun scripts/bench-vector.ts`: semantic recall's vector list with pgvector's HNSW index against
 * the bounded comparison without it (decisions 021 and 028), in the same run on the same data.
 *
 * Needs `DATABASE_URL` of a server that has pgvector 0.8+ (`scripts/pgvector-postgres.sh start`
 * gives one; the embedded PostgreSQL has none). Seeds one organisation with BENCH_VECTOR_SIZE
 * memories (100,000) of BENCH_VECTOR_DIMENSIONS (384) dimensions, clustered around 1,000 topics,
 * and a second organisation a tenth its size in the same index. Then, for each path, one client
 * runs the same 200 queries through `recallMemories` on the app role inside a tenant transaction
 * (the store's path; not the MCP tool, so no embeddings provider is involved) and reports p50,
 * p99 and recall@5 against the exact nearest five.
 */
import {
  addMember,
  connectDatabase,
  createOrganization,
  migrateDatabase,
  recallMemories,
  withTenant,
} from "@north/db";
import { unitVector } from "@north/mcp-server";
import postgres from "postgres";
import { createBenchDatabase } from "./bench-database.ts";
import { benchNumber } from "./bench-settings.ts";

const SIZE = benchNumber("BENCH_VECTOR_SIZE", 100_000, { min: 1, integer: true });
const DIMENSIONS = benchNumber("BENCH_VECTOR_DIMENSIONS", 384, { min: 1, integer: true });
const QUERIES = 200;
const TOPICS = 1000;
const MODEL = `bench@${DIMENSIONS}`;

/** A repeatable generator (mulberry32), so every run seeds the same vectors. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const next = random(7410);
const gaussian = () => Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next());
const topics = Array.from({ length: TOPICS }, () =>
  unitVector(Array.from({ length: DIMENSIONS }, gaussian)),
);
/** A point near a topic: noise of length about `spread` (so 0.6 keeps topics apart). */
const near = (topic: number[], spread: number) =>
  unitVector(topic.map((x) => x + (gaussian() * spread) / Math.sqrt(DIMENSIONS)));

if (!process.env.DATABASE_URL) {
  console.error("bench-vector needs DATABASE_URL of a server with pgvector 0.8+");
  process.exit(2);
}
const bench = await createBenchDatabase("north_bench_vector");
const owner = postgres(bench.ownerUrl, { max: 2, onnotice: () => {} });
const ownerDb = connectDatabase(bench.ownerUrl, { max: 1 });
const app = connectDatabase(bench.appUrl, { max: 1, applicationName: "north-bench-vector" });
try {
  const [extension] = await owner`select extversion from pg_extension where extname = 'vector'`;
  if (!extension) throw new Error("this server has no pgvector: nothing to compare");

  const seedOrganization = async (rows: number) => {
    const organization = await createOrganization(ownerDb.db, { name: "Bench" });
    const organizationId = organization.id;
    const { userId } = await addMember(ownerDb.db, {
      organizationId,
      email: `lawyer${rows}@example.test`,
    });
    for (let start = 0; start < rows; start += 2000) {
      const batch = Array.from({ length: Math.min(2000, rows - start) }, (_, i) => ({
        n: start + i,
        vector: `{${near(topics[Math.floor(next() * TOPICS)] ?? [], 0.6).join(",")}}`,
      }));
      await owner`
        insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at,
                              created_at, embedding, embedding_model)
        select ${organizationId}, ${userId}, 'fact', 'stated', 'Bench memory ' || r.n, 'seed',
               now() + interval '90 days', now() - make_interval(secs => ${rows}::int - r.n),
               r.vector::real[], ${MODEL}
        from jsonb_to_recordset(${JSON.stringify(batch)}::text::jsonb) as r(n int, vector text)`;
    }
    return { organizationId, userId };
  };
  const tenant = await seedOrganization(SIZE);
  await seedOrganization(Math.floor(SIZE / 10));
  await owner`vacuum analyze memories`;

  const queries = Array.from({ length: QUERIES }, () =>
    near(topics[Math.floor(next() * TOPICS)] ?? [], 0.6),
  );
  const literal = (v: number[]) => `[${v.join(",")}]`;
  // The exact nearest five of the organisation, by a scan that uses no vector index.
  const exact = await owner.begin(async (sql) => {
    await sql`set local enable_indexscan = off`;
    const lists: string[][] = [];
    for (const q of queries) {
      const rows = await sql<{ id: string }[]>`
        select id from memories
        where organization_id = ${tenant.organizationId} and embedding_model = ${MODEL}
        order by embedding::vector(${sql.unsafe(String(DIMENSIONS))}) <=> ${literal(q)}::vector
        limit 5`;
      lists.push(rows.map((r) => r.id));
    }
    return lists;
  });

  const run = async () => {
    const times: number[] = [];
    let hits = 0;
    for (const [i, q] of queries.entries()) {
      const started = performance.now();
      const found = await withTenant(app.db, tenant, (tx) =>
        recallMemories(tx, {
          organizationId: tenant.organizationId,
          query: "quillwort", // no memory has it: the vector list decides
          limit: 5,
          queryEmbedding: q,
          embeddingModel: MODEL,
        }),
      );
      times.push(performance.now() - started);
      const truth = new Set(exact[i]);
      hits += found.memories.filter((m) => truth.has(m.id)).length;
    }
    times.sort((a, b) => a - b);
    const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
    return { p50: at(0.5), p99: at(0.99), recallAt5: hits / (5 * QUERIES) };
  };

  // The index is built by migrate (CONCURRENTLY), as for a deployment that gains pgvector, with
  // room for the graph in memory (decision 028): PostgreSQL's default of 64 MB makes it slow.
  await owner.unsafe(
    `alter database ${new URL(bench.ownerUrl).pathname.slice(1)} set maintenance_work_mem = '1GB'`,
  );
  const indexStarted = performance.now();
  const { vectorSearch } = await migrateDatabase(bench.ownerUrl);
  const buildSeconds = (performance.now() - indexStarted) / 1000;
  await run(); // warm-up
  const hnsw = await run();
  await owner.unsafe(
    `drop index ${vectorSearch.indexes.find((i) => i.model === MODEL)?.index ?? "missing"}`,
  );
  await run();
  const bounded = await run();
  const round = (n: number) => Math.round(n * 100) / 100;
  console.log(
    JSON.stringify(
      {
        memories: SIZE,
        otherOrganisation: Math.floor(SIZE / 10),
        dimensions: DIMENSIONS,
        pgvector: extension.extversion,
        indexBuildSeconds: round(buildSeconds),
        hnsw: { p50Ms: round(hnsw.p50), p99Ms: round(hnsw.p99), recallAt5: round(hnsw.recallAt5) },
        withoutIndex: {
          p50Ms: round(bounded.p50),
          p99Ms: round(bounded.p99),
          recallAt5: round(bounded.recallAt5),
        },
        p50Ratio: round(hnsw.p50 / bounded.p50),
      },
      null,
      2,
    ),
  );
} finally {
  await app.close();
  await ownerDb.close();
  await owner.end();
  await bench.drop();
}
