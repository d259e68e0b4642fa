// @ts-check
/**
 * Mutation testing of this package: `bun run test:mutation` at the root (docs/mutation.md).
 * The run exits non-zero when the score falls below `thresholds.break`.
 *
 * Stryker runs on Bun (`bun --bun`), because Stryker 10 refuses Node 20 and Bun reports a newer
 * Node. Under Bun, once Babel (Stryker's instrumenter) wraps the native `Error.prepareStackTrace`,
 * `Error.captureStackTrace` on an object that is not a real Error throws "First argument must be
 * an Error object" (oven-sh/bun#41151); the follow-redirects copy inside Vite does exactly that
 * when the Vitest runner loads. Until Bun fixes it, such objects get V8's format from the hook.
 */
import "../../scripts/stryker-bun.mjs";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  mutate: ["src/**/*.ts", "!src/**/*.test.ts"],
  testRunner: "vitest",
  // Named: Bun's isolated node_modules hides the runner from core's own folder, where Stryker looks.
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.config.ts" },
  coverageAnalysis: "perTest",
  concurrency: 2,
  thresholds: { high: 90, low: 85, break: 85 },
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "../../reports/mutation/agent-runtime.html" },
  jsonReporter: { fileName: "../../reports/mutation/agent-runtime.json" },
};
