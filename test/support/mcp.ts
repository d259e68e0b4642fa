import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tenant } from "@north/db";
import {
  buildMcpApp,
  type Capability,
  createRateLimiter,
  type Embedder,
  type MetricsAccess,
  type Principal,
  type RateLimiter,
  type Scope,
} from "@north/mcp-server";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { capturingLogger } from "./logs.ts";
import { connectMcpClient, type Fetch } from "./mcp-client.ts";

export { TEST_MCP_CLIENT } from "./mcp-client.ts";

export const ALL_SCOPES: Scope[] = ["profile:write", "memory:read", "memory:write", "admin"];
export const TEST_AUDIT_KEY = "test-audit-key-for-north-suites";

export interface TestApp {
  app: ReturnType<typeof buildMcpApp>;
  /** Every log line the app wrote, as text. */
  logs: string[];
  limiter: RateLimiter;
  /** Registers a principal and returns the bearer token the synthetic resolver maps to it. */
  tokenFor(tenant: Tenant, options?: { scopes?: Scope[]; role?: Principal["role"] }): string;
  /** An SDK client connected through `app.request` with that principal's token. */
  connect(
    tenant: Tenant,
    options?: { scopes?: Scope[]; role?: Principal["role"] },
  ): Promise<Client>;
  /** `app.request` with the given token. */
  request(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  db: TestDatabase;
  limiter?: RateLimiter;
  capabilities?: readonly Capability[];
  embedder?: Embedder;
  recallTokenBudget?: number;
  /** Exact browser origins to accept (NORTH_ALLOWED_ORIGINS). */
  allowedOrigins?: readonly string[];
  tenantConcurrency?: { perOrganization: number; maxWaitMs: number };
  /** Host names to answer to (NORTH_ALLOWED_HOSTS); default loopback names only. */
  allowedHosts?: readonly string[];
  /** Who may read `/metrics`; default off (404). */
  metrics?: MetricsAccess;
}

/**
 * The real app (`buildMcpApp`) with a synthetic resolver: bearer tokens minted here map to
 * principals. Everything else is real: transport, limiter, tenant transactions, ledger, logger.
 */
export function createTestApp(options: TestAppOptions): TestApp {
  const principals = new Map<string, Principal>();
  const { logger, logs } = capturingLogger("debug");
  const limiter =
    options.limiter ??
    createRateLimiter({
      writesPerMinute: 10_000,
      readsPerMinute: 10_000,
      protocolRequestsPerMinute: 10_000,
    });
  const app = buildMcpApp({
    db: options.db.app.db,
    resolvePrincipal: async (request) => {
      const header = request.headers.get("authorization") ?? "";
      const token = header.startsWith("Bearer ") ? header.slice(7) : "";
      return principals.get(token) ?? null;
    },
    limiter,
    logger,
    auditKey: TEST_AUDIT_KEY,
    capabilities: options.capabilities,
    embedder: options.embedder,
    recallTokenBudget: options.recallTokenBudget,
    allowedOrigins: options.allowedOrigins,
    tenantConcurrency: options.tenantConcurrency,
    allowedHosts: options.allowedHosts,
    metrics: options.metrics,
  });
  const tokenFor: TestApp["tokenFor"] = (tenant, opts = {}) => {
    const token = `test_${randomBytes(12).toString("hex")}`;
    principals.set(token, {
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      role: opts.role ?? "member",
      scopes: opts.scopes ?? ALL_SCOPES,
      tokenId: null,
    });
    return token;
  };
  const clients: Client[] = [];
  return {
    app,
    logs,
    limiter,
    tokenFor,
    async connect(tenant, opts) {
      const token = tokenFor(tenant, opts);
      const client = await connectSdkClient(
        (url, init) => Promise.resolve(app.request(String(url), init as RequestInit)),
        token,
      );
      clients.push(client);
      return client;
    },
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.token) headers.set("Authorization", `Bearer ${init.token}`);
      return Promise.resolve(app.request(`http://localhost${path}`, { ...init, headers }));
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      if (!options.limiter) await limiter.close();
    },
  };
}

/**
 * An SDK client on `http://localhost/mcp` through `fetch`, bearing `token`: the client
 * `NORTH_TEST_MCP_CLIENT` names (test/support/mcp-client.ts).
 */
export function connectSdkClient(fetch: Fetch, token: string): Promise<Client> {
  return connectMcpClient("http://localhost/mcp", { fetch, token });
}

/**
 * The preamble of most suites, once: a fresh database and the real app for this file, created
 * before its tests and closed and dropped after them. The returned `db` and `harness` forward
 * to the live objects, so a suite can destructure them at the top of the file.
 */
export function useTestApp(options: Omit<TestAppOptions, "db"> = {}): {
  db: TestDatabase;
  harness: TestApp;
} {
  let db: TestDatabase | undefined;
  let harness: TestApp | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    harness = createTestApp({ ...options, db });
  });
  afterAll(async () => {
    await harness?.close();
    await db?.drop();
  });
  return {
    db: forwardTo(() => db, "db"),
    harness: forwardTo(() => harness, "harness"),
  };
}

/** A stand-in that forwards to the object `current()` returns once a `beforeAll` has made it. */
export function forwardTo<T extends object>(current: () => T | undefined, name: string): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const live = current();
      if (!live) throw new Error(`${name} is used before beforeAll created it`);
      const value = Reflect.get(live, key);
      return typeof value === "function" ? value.bind(live) : value;
    },
  });
}
