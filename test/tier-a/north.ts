import {
  addMember,
  connectDatabase,
  createApiToken,
  createOrganization,
  type DatabaseHandle,
  freePort,
  type Tenant,
} from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createRateLimiter,
  type HttpServerHandle,
  type RateLimiter,
  startHttpServer,
} from "@north/mcp-server";
import { capturingLogger } from "../support/logs.ts";

/** The audit fingerprint key of the run's servers (test/support/mcp.ts imports vitest). */
const AUDIT_KEY = "tier-a-audit-key-for-north-hosts";

/** A database North can run on: its owner URL (rows, seeding) and its app login role. */
export interface TierADatabase {
  ownerUrl: string;
  appUrl: string;
  /** `transaction` when `appUrl` leads to PgBouncer in transaction mode. */
  pooler: "none" | "transaction";
}

/** One lawyer of the run: a member of a workspace of their own, with an API token. */
export interface Lawyer {
  tenant: Tenant;
  email: string;
  token: string;
}

/** Which of the run's two servers a case talks to. */
export type NorthName = "roomy" | "tight";

/**
 * North as a host reaches it: the real app (`buildMcpApp`) with the real token resolver, on a
 * loopback port. Two servers on the same database: `roomy`, whose budgets no case reaches, and
 * `tight`, whose write budget is one save per `windowS` seconds (the rate-limit case).
 */
export interface TierANorth {
  url(name: NorthName): string;
  owner: DatabaseHandle;
  /** A fresh workspace and member, so no two cases' rows mix. */
  newLawyer(label: string): Promise<Lawyer>;
  /** Every log line the servers wrote (the trace of a miss can quote them). */
  logs: string[];
  close(): Promise<void>;
}

export async function startTierANorth(
  database: TierADatabase,
  options: { windowS: number },
): Promise<TierANorth> {
  const owner = connectDatabase(database.ownerUrl, { max: 2, applicationName: "north-tier-a" });
  const app = connectDatabase(database.appUrl, {
    max: 10,
    applicationName: "north-tier-a-app",
    transactionPooler: database.pooler === "transaction",
  });
  const { logger, logs } = capturingLogger("info");
  const limiters: Record<NorthName, RateLimiter> = {
    roomy: createRateLimiter({
      writesPerMinute: 10_000,
      readsPerMinute: 10_000,
      protocolRequestsPerMinute: 10_000,
    }),
    tight: createRateLimiter({
      writesPerMinute: 1,
      readsPerMinute: 10_000,
      protocolRequestsPerMinute: 10_000,
      windowSeconds: options.windowS,
    }),
  };
  const servers: HttpServerHandle[] = [];
  const urls = {} as Record<NorthName, string>;
  for (const name of ["roomy", "tight"] as const) {
    const mcpApp = buildMcpApp({
      db: app.db,
      resolvePrincipal: createAuthResolver(app.db),
      limiter: limiters[name],
      logger,
      auditKey: AUDIT_KEY,
    });
    const port = await freePort();
    servers.push(await startHttpServer(mcpApp.fetch, { port, hostname: "127.0.0.1" }));
    urls[name] = `http://127.0.0.1:${port}/mcp`;
  }
  let count = 0;
  return {
    url: (name) => urls[name],
    owner,
    logs,
    async newLawyer(label) {
      count += 1;
      const org = await createOrganization(owner.db, { name: `Tier A ${count} ${label}` });
      const email = `lawyer${count}@tier-a.test`;
      const member = await addMember(owner.db, { organizationId: org.id, email });
      const tenant = { organizationId: org.id, userId: member.userId };
      const { token } = await createApiToken(owner.db, {
        ...tenant,
        scopes: ["profile:write", "memory:read", "memory:write"],
        expiresAt: null,
      });
      return { tenant, email, token };
    },
    async close() {
      await Promise.all(servers.map((server) => server.close()));
      await Promise.all(Object.values(limiters).map((limiter) => limiter.close()));
      await Promise.all([app.close(), owner.close()]);
    },
  };
}
