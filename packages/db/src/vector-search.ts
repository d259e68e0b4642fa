import { sql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Database } from "./client.ts";

/**
 * pgvector, when the server has it (decision 028). Without it recall compares vectors in plain
 * SQL over a bounded candidate set (decision 021); with it, each embedding model gets a partial
 * HNSW index over `memories.embedding` cast to the model's dimensions, and the vector list comes
 * from that index. Vectors stay in `embedding real[]` either way, so a server gaining or losing
 * pgvector changes no data.
 */

/** What `north migrate` found and did about pgvector. */
export interface VectorSearchReport {
  /**
   * `installed`: the extension was already in the database. `created`: this run created it.
   * `unavailable`: the server has no pgvector (recall compares vectors without an index).
   * `not-permitted`: the server has it but this connection may not create it (a superuser must
   * run `CREATE EXTENSION vector` in the database, then `north migrate` again). `outdated`:
   * installed, but older than 0.8.0, whose iterative index scans North needs (`ALTER EXTENSION
   * vector UPDATE` after upgrading the server's package).
   */
  extension: "installed" | "created" | "unavailable" | "not-permitted" | "outdated";
  /** pgvector's version in the database, when installed. */
  version?: string;
  /** What happened to each embedding model's HNSW index (models that have vectors stored). */
  indexes: Array<{ model: string; index: string; outcome: VectorIndexOutcome }>;
}

/**
 * `created`: built now. `present`: already there. `too-large`: over 4,000 dimensions (no HNSW
 * index can hold them; recall compares without one). `deferred` (server side only): too many
 * vectors to build inside a transaction without holding writes, left to `north migrate`.
 * `invalid`: an interrupted concurrent build left it unusable (`north migrate` rebuilds it).
 * `busy`: a lock could not be had quickly, tried again later. `unavailable`: no pgvector.
 */
export type VectorIndexOutcome =
  | "created"
  | "present"
  | "too-large"
  | "deferred"
  | "invalid"
  | "busy"
  | "unavailable";

/**
 * The HNSW index of one model, as a `format()` template: %1$I index name, %2$I pgvector's schema,
 * %3$s the vector type (`vector` up to 2,000 dimensions, `halfvec` up to 4,000), %4$s the
 * dimensions, %5$L the model key, %6$s `CONCURRENTLY` or nothing. `north migrate` and
 * `ensure_memory_vector_index` build from this one text, and `memory_vector_candidates` orders
 * by the same expression, which is what lets the planner use the index.
 */
export const HNSW_INDEX_FORMAT =
  "CREATE INDEX %6$s %1$I ON public.memories USING hnsw ((embedding::%2$I.%3$s(%4$s)) %2$I.%3$s_cosine_ops) WHERE embedding_model = %5$L";

/** SQL (for plpgsql too) naming a model's index: model keys are free text, index names are not. */
export const vectorIndexNameSql = (model: string) =>
  `('memories_hnsw_' || pg_catalog.left(pg_catalog.md5(${model}), 16))`;

/** SQL giving a model key's dimensions (`model@1536` → 1536), or null. */
export const modelDimensionsSql = (model: string) =>
  `pg_catalog.substring(${model}, '@([0-9]{1,6})$')::integer`;

/**
 * SQL telling whether a pgvector version is 0.8.0 or later, whose iterative index scans North
 * needs (`0.8.0`, `0.10.1`, a packager's `0.8.0-1`).
 */
export const pgvectorCurrentSql = (version: string) =>
  `(pg_catalog.string_to_array(pg_catalog.split_part(${version}, '-', 1), '.')::integer[] >= '{0,8}')`;

/** SQL giving the vector type for some dimensions: null when no HNSW index can hold them. */
export const vectorTypeSql = (dimensions: string) =>
  `CASE WHEN ${dimensions} BETWEEN 1 AND 2000 THEN 'vector' WHEN ${dimensions} BETWEEN 2001 AND 4000 THEN 'halfvec' END`;

/**
 * The most vectors of one model that `ensure_memory_vector_index` indexes inside a transaction
 * (well under a second of build, writes held back meanwhile); more are left to `north migrate`,
 * which builds concurrently.
 */
export const VECTOR_INDEX_INLINE_LIMIT = 1000;

/** SQLSTATE 42501: the connection may not create the extension (it is not trusted). */
const INSUFFICIENT_PRIVILEGE = "42501";

/**
 * Run by `north migrate` after the migrations, on the migrator's connection (outside any
 * transaction): creates pgvector when the server offers it, then gives every embedding model
 * that has vectors stored its HNSW index, built `CONCURRENTLY` so writes go on meanwhile. An
 * index an interrupted build left invalid is dropped and built again. Running it twice changes
 * nothing.
 */
export async function prepareVectorSearch(client: Sql): Promise<VectorSearchReport> {
  const extension = await ensureExtension(client);
  if (extension.state !== "installed" && extension.state !== "created") {
    return { extension: extension.state, indexes: [] };
  }
  // Every model that has vectors stored: a full scan, once per migrate. (None before the
  // migration that added the column, when an upgrade test migrates part of the way.)
  const [column] = await client`
    select 1 from pg_catalog.pg_attribute
    where attrelid = pg_catalog.to_regclass('public.memories') and attname = 'embedding_model'`;
  const models = column
    ? await client<{ model: string }[]>`
        select distinct embedding_model as model from public.memories
        where embedding_model is not null order by 1`
    : [];
  const indexes: VectorSearchReport["indexes"] = [];
  for (const { model } of models) {
    indexes.push({ model, ...(await buildIndex(client, model, extension.schema)) });
  }
  return { extension: extension.state, version: extension.version, indexes };
}

async function ensureExtension(
  client: Sql,
): Promise<
  | { state: "installed" | "created"; schema: string; version: string }
  | { state: "unavailable" | "not-permitted" | "outdated" }
> {
  const installed = async () => {
    const [row] = await client.unsafe<{ schema: string; version: string; current: boolean }[]>(
      `select n.nspname as schema, e.extversion as version,
              ${pgvectorCurrentSql("e.extversion")} as current
       from pg_catalog.pg_extension e join pg_catalog.pg_namespace n on n.oid = e.extnamespace
       where e.extname = 'vector'`,
    );
    return row;
  };
  const found = await installed();
  if (found) {
    return found.current
      ? { state: "installed", schema: found.schema, version: found.version }
      : { state: "outdated" };
  }
  const [offered] = await client`
    select 1 from pg_catalog.pg_available_extensions where name = 'vector'`;
  if (!offered) return { state: "unavailable" };
  try {
    await client.unsafe("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public");
  } catch (error) {
    if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) {
      return { state: "not-permitted" };
    }
    throw error;
  }
  const created = await installed();
  if (!created) throw new Error("CREATE EXTENSION vector left no extension");
  return created.current
    ? { state: "created", schema: created.schema, version: created.version }
    : { state: "outdated" };
}

async function buildIndex(
  client: Sql,
  model: string,
  schema: string,
): Promise<{ index: string; outcome: VectorIndexOutcome }> {
  // The index's name, type and state, and both statements, in one round trip.
  const [plan] = await client.unsafe<
    { index: string; buildable: boolean; valid: boolean | null; drop: string; create: string }[]
  >(
    `select p.index, p.type is not null as buildable,
            (select i.indisvalid from pg_catalog.pg_index i
             where i.indexrelid = pg_catalog.to_regclass('public.' || pg_catalog.quote_ident(p.index))) as valid,
            pg_catalog.format('DROP INDEX CONCURRENTLY IF EXISTS public.%I', p.index) as drop,
            pg_catalog.format($3, p.index, $2::text, p.type, p.dimensions, $1::text, 'CONCURRENTLY') as create
     from (select ${vectorIndexNameSql("$1::text")} as index,
                  ${vectorTypeSql(modelDimensionsSql("$1::text"))} as type,
                  ${modelDimensionsSql("$1::text")} as dimensions) p`,
    [model, schema, HNSW_INDEX_FORMAT],
  );
  if (!plan) throw new Error("no index plan");
  if (!plan.buildable) return { index: plan.index, outcome: "too-large" };
  if (plan.valid === true) return { index: plan.index, outcome: "present" };
  if (plan.valid === false) await client.unsafe(plan.drop);
  await client.unsafe(plan.create);
  return { index: plan.index, outcome: "created" };
}

/**
 * The server's half (decision 028): once the provider has answered and the model's key is known,
 * give it its HNSW index if pgvector is there — built inside `ensure_memory_vector_index`, which
 * does so only while few vectors of the model exist (a new model has none), so writes wait for a
 * moment at most. Otherwise the outcome says why not, for the log.
 */
export async function ensureVectorIndex(db: Database, model: string): Promise<VectorIndexOutcome> {
  const [row] = await db.execute<{ outcome: VectorIndexOutcome }>(
    sql`select public.ensure_memory_vector_index(${model}) as outcome`,
  );
  if (!row) throw new Error("ensure_memory_vector_index returned nothing");
  return row.outcome;
}
