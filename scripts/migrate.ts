/**
 * `bun run db:migrate`: a door into `north migrate` (apps/north), which applies the committed
 * migrations to `DATABASE_URL` holding an advisory lock, so concurrent runs queue.
 */
process.argv.splice(2, 0, "migrate");
await import("../apps/north/src/main.ts");

export {};
