import { defineConfig } from "drizzle-kit";

/** drizzle-kit `generate` only: migrations are applied by `bun run db:migrate`, never `push`. */
export default defineConfig({
  dialect: "postgresql",
  schema: [
    "./packages/db/src/schema/index.ts",
    "./packages/db/src/schema/authorization-server.ts",
    "./packages/db/src/schema/grant-records.ts",
  ],
  out: "./drizzle",
});
