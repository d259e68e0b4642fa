import { defineConfig } from "vitest/config";

/**
 * This package's unit tests alone, for `bun run test:mutation`: Stryker runs them against every
 * mutant of `src/`. The root config still runs them in its `unit` project.
 */
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    exclude: ["**/*.integration.test.ts", "**/node_modules/**"],
  },
});
