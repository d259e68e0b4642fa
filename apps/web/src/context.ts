import {
  createFingerprinter,
  type Database,
  recordAudit,
  type TargetFingerprint,
  type Tenant,
  type Tx,
  withTenant,
} from "@north/db";
import type { Hono } from "hono";
import type { ConsoleLogger } from "./errors.ts";
import type { Manager, SessionTimeouts } from "./session.ts";

export interface AdminAppDeps {
  /** Pool on the app login role: the console has no more rights than the MCP server. */
  db: Database;
  /** The server's audit key: subject lookups use the same fingerprints as the memory store. */
  auditKey: string;
  /** The server's logger: console failures are logged here, with the request id. */
  logger: ConsoleLogger;
  /** `NORTH_PUBLIC_URL`: when https, session cookies are `Secure` even behind a TLS proxy. */
  publicUrl?: string;
  /** Session idle and absolute lifetimes; 30 minutes and 8 hours by default. */
  sessionTimeouts?: Partial<SessionTimeouts>;
}

/** The mounting app may pass its request id, so its logs, header and this page agree. */
export type Env = {
  Bindings: { requestId?: string } | undefined;
  Variables: { manager: Manager; requestId: string };
};

export type ConsoleApp = Hono<Env>;

/** What a page's work returns to {@link ConsoleContext.asManager}: its value and its audit row. */
export interface PageWork<T> {
  value: T;
  outcome: "read" | "forgotten" | "noop" | "rejected" | "revoked";
  /** Fingerprinted before it reaches the ledger. */
  target?: string;
  affected?: number;
  reason?: string;
}

/** What every section of the console (routes/) is built from. */
export interface ConsoleContext {
  deps: AdminAppDeps;
  fingerprint: (value: string) => TargetFingerprint;
  /** Runs a page's work as the signed-in manager, with its audit row in the same transaction. */
  asManager<T>(
    c: { get(key: "manager"): Manager; get(key: "requestId"): string },
    tool: string,
    work: (tx: Tx, tenant: Tenant) => Promise<PageWork<T>>,
  ): Promise<T>;
}

export function createConsoleContext(deps: AdminAppDeps): ConsoleContext {
  const fingerprint = createFingerprinter(deps.auditKey);
  return {
    deps,
    fingerprint,
    asManager(c, tool, work) {
      const manager = c.get("manager");
      const tenant = { organizationId: manager.organizationId, userId: manager.userId };
      return withTenant(deps.db, tenant, async (tx) => {
        const result = await work(tx, tenant);
        await recordAudit(tx, {
          tool,
          outcome: result.outcome,
          tokenId: manager.tokenId,
          requestId: c.get("requestId"),
          target: result.target === undefined ? undefined : fingerprint(result.target),
          affected: result.affected,
          reason: result.reason,
        });
        return result.value;
      });
    },
  };
}
