// @ts-check
/**
 * Mutation testing of the working-profile and memory stores in packages/db:
 * `bun run test:mutation:stores` (docs/mutation.md, "Stores (packages/db)"). The run exits
 * non-zero when the score falls below `thresholds.break`.
 *
 * The mutants are judged by the suites that reach these stores through PostgreSQL
 * (vitest.stores.config.ts), so the run starts at the root. `inPlace: true`: a sandbox copy would
 * not work here, because the acceptance suite imports `@north/db` through the root
 * `node_modules/@north/db` symlink, which Stryker links back to the real tree, so the app would
 * run the unmutated stores. Stryker restores the two files when it ends; run it only in a
 * checkout nobody else is editing.
 *
 * Stryker runs on Bun (`bun --bun`), because Stryker 10 refuses Node 20; the hook below works
 * around oven-sh/bun#41151, as in packages/agent-runtime/stryker.config.mjs.
 */
import "./scripts/stryker-bun.mjs";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  mutate: ["packages/db/src/working-profile.ts", "packages/db/src/memories.ts"],
  testRunner: "vitest",
  // Named: Bun's isolated node_modules hides the runner from core's own folder, where Stryker looks.
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.stores.config.ts" },
  inPlace: true,
  coverageAnalysis: "perTest",
  concurrency: 2,
  thresholds: { high: 85, low: 75, break: 75 },
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/stores.html" },
  jsonReporter: { fileName: "reports/mutation/stores.json" },
};
