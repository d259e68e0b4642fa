/**
 * `bun run provision`, the name operators know: a door into `north provision` (apps/north), which
 * creates or upgrades the roles, ownership, grants and functions on `DATABASE_URL` in one
 * idempotent transaction. Run it after `bun run db:migrate`.
 */
process.argv.splice(2, 0, "provision");
await import("../apps/north/src/main.ts");

export {};
