import { defineConfig } from "vitest/config";

/**
 * The suites that judge the working-profile and memory stores in mutation testing
 * (`bun run test:mutation:stores`, docs/mutation.md). PostgreSQL comes from the usual global
 * setup, in its own child process (decision 010). Stryker runs these on Bun (`bun --bun`).
 */
export default defineConfig({
  test: {
    include: [
      "packages/db/src/working-profile.integration.test.ts",
      "packages/db/src/rls.integration.test.ts",
      "test/memory.acceptance.test.ts",
    ],
    exclude: ["**/node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Under `bun --bun` (how Stryker runs), an externalized `import { z } from "zod"` comes back
    // undefined: zod's index re-exports a namespace import (`export { z, z as default }`), which
    // Vite's module runner on Bun loses. Transforming zod with the app code avoids that.
    server: { deps: { inline: ["zod"] } },
  },
});
