/**
 * `bun run db:migrate`: applies the committed migrations to `DATABASE_URL` (the owner/migrator
 * connection), holding an advisory lock so concurrent runs queue.
 */
import { migrateDatabase } from "@north/db";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is not set: it must name the owner/migrator connection.");
  process.exit(2);
}
await migrateDatabase(url);
console.log(JSON.stringify({ migrated: true }));
