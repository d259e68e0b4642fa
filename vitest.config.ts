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

/**
 * The suites that drive the app through the app login role (MCP tools, the CLI, the pipelined
 * transaction), which `bun run test:pgbouncer` runs again behind PgBouncer in transaction mode
 * (SPEC §10). Chosen by name: a suite named `*.acceptance`, `memory-*`, `matters*` or under
 * `fuzz/` is in it without anyone adding it here (docs/testing.md).
 */
const POOLER_SUITES = [
  "test/*.acceptance.test.ts",
  "test/memory-*.test.ts",
  "test/matters*.test.ts",
  "test/fuzz/**/*.test.ts",
  "test/contract.test.ts",
  "test/transport.test.ts",
  "test/oauth.test.ts",
  "test/limiter-and-audit.test.ts",
  "test/language-search.test.ts",
  "test/embeddings-provider.test.ts",
  "test/operator.e2e.test.ts",
  "test/cli-export.test.ts",
  "packages/db/src/pipelined-transaction*.integration.test.ts",
];

/**
 * The suites that touch memories and migrations, which `bun run test:pgvector` runs again on a
 * PostgreSQL with pgvector (decision 028; `DATABASE_URL` from scripts/pgvector-postgres.sh).
 * Every `memory*` and `matters*` suite and every integration suite of packages/db is in it by
 * its name.
 */
const VECTOR_SUITES = [
  "test/memory*.test.ts",
  "test/matters*.test.ts",
  "test/language-search.test.ts",
  "test/embeddings-provider.test.ts",
  "test/operator.e2e.test.ts",
  "test/cli-export.test.ts",
  "packages/db/src/**/*.integration.test.ts",
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
      {
        test: {
          name: "pgbouncer",
          include: POOLER_SUITES,
          env: { NORTH_TEST_PGBOUNCER: "1" },
          ...database,
        },
      },
      { test: { name: "pgvector", include: VECTOR_SUITES, ...database } },
    ],
  },
});
