import { defineConfig } from "vitest/config";

const database = {
  globalSetup: ["test/support/global-setup.ts"],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

/**
 * The suites that exercise the protocol surface (tools, prompts, receipts, transport, OAuth,
 * stdio, metering, malformed input), which `bun run test:mcp-clients` runs again under the v2
 * client pinned to 2026-07-28 and in `auto`: decision 005 says why these. The `db` project runs
 * them, and everything else, under the client `NORTH_TEST_MCP_CLIENT` names (v1 by default).
 */
const PROTOCOL_SUITES = [
  "test/contract.test.ts",
  "test/transport.test.ts",
  "test/working-profile.acceptance.test.ts",
  "test/memory.acceptance.test.ts",
  "test/oauth.test.ts",
  "test/faults/stdio-outage.test.ts",
  "test/security/protocol-metering.test.ts",
  "test/hosts/bounded-results.test.ts",
  "test/fuzz/**/*.test.ts",
];

const underClient = (client: "v2-pinned" | "v2-auto") => ({
  test: {
    name: `mcp-${client}`,
    include: PROTOCOL_SUITES,
    env: { NORTH_TEST_MCP_CLIENT: client },
    ...database,
  },
});

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts"],
          exclude: ["**/*.integration.test.ts", "**/node_modules/**"],
        },
      },
      {
        test: {
          name: "db",
          include: ["**/*.integration.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          ...database,
        },
      },
      underClient("v2-pinned"),
      underClient("v2-auto"),
    ],
  },
});
