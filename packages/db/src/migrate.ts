import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { ADVISORY_LOCKS } from "./advisory-locks.ts";
import { prepareVectorSearch, type VectorSearchReport } from "./vector-search.ts";

/**
 * The repository's `drizzle/` folder, found by walking up from this module, so it resolves the
 * same from `packages/db/src` and from the Node bundle in `dist/`. The CLI passes
 * `NORTH_MIGRATIONS_DIR` instead, for installs that ship the folder elsewhere.
 */
function findMigrationsFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "drizzle");
    if (existsSync(path.join(candidate, "meta", "_journal.json"))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("cannot find the drizzle/ migrations folder");
    dir = parent;
  }
}

export const MIGRATIONS_FOLDER = findMigrationsFolder();

const MIGRATION_LOCK_KEY = ADVISORY_LOCKS.migrate;

/**
 * Applies pending migrations on the owner connection, then detects pgvector and prepares vector
 * search with it (decision 028); returns what it found. Drizzle's migrator takes no lock, so this
 * holds a session advisory lock on one dedicated connection: a second process migrating the same
 * database waits, then finds nothing left to apply.
 */
export async function migrateDatabase(
  url: string,
  migrationsFolder: string = MIGRATIONS_FOLDER,
): Promise<{ vectorSearch: VectorSearchReport }> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    await migrate(drizzle(client), { migrationsFolder });
    const vectorSearch = await prepareVectorSearch(client);
    await client`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    return { vectorSearch };
  } finally {
    await client.end({ timeout: 5 });
  }
}
