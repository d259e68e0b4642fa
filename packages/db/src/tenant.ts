import { type Database, type Tx, transactionTimeoutMs } from "./client.ts";
import { pipelined, type RawStatement } from "./pipelined-transaction.ts";
import { TENANT_ORGANIZATION_SETTING, TENANT_USER_SETTING } from "./schema/index.ts";

/** Whose request this is. Always taken from the authenticated principal, never from input. */
export interface Tenant {
  organizationId: string;
  userId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The statement that opens a tenant transaction: the tenant (and, behind a transaction pooler,
 * whose connections carry no timeouts of their own — client.ts — the timeouts) with
 * `set_config(…, true)`, so the setting ends with the transaction and a pooled connection never
 * carries one request's tenant into the next.
 */
function tenantStatement(db: Database, organizationId: string, userId: string): RawStatement {
  const ms = transactionTimeoutMs(db);
  const params = [TENANT_ORGANIZATION_SETTING, organizationId, TENANT_USER_SETTING, userId];
  if (ms === undefined) {
    return { text: "select set_config($1, $2, true), set_config($3, $4, true)", params };
  }
  return {
    text: "select set_config($1, $2, true), set_config($3, $4, true), set_config('statement_timeout', $5, true), set_config('idle_in_transaction_session_timeout', $5, true)",
    params: [...params, String(ms)],
  };
}

/**
 * Runs `work` in one transaction on the given pool with the tenant set first. Policies read
 * the tenant; without it every tenant table reads as empty. The tenant goes out with BEGIN and
 * the work's first statement in one write, and `tail` (the audit row of a tool call, built from
 * the work's result) with COMMIT (decision 035): a tool call is two round trips.
 */
export async function withTenant<T>(
  db: Database,
  tenant: Tenant,
  work: (tx: Tx) => Promise<T>,
  tail?: (result: T) => readonly RawStatement[],
): Promise<T> {
  if (!UUID.test(tenant.organizationId) || !UUID.test(tenant.userId)) {
    throw new TypeError("withTenant needs uuid organization and user ids");
  }
  const head = [tenantStatement(db, tenant.organizationId, tenant.userId)];
  return pipelined({ head, tail }, () => db.transaction(work));
}

/**
 * Runs `work` with only the organisation set: for the ledger's events that have no actor yet,
 * such as a sign-in refused before any member was found.
 */
export async function withOrganization<T>(
  db: Database,
  organizationId: string,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  if (!UUID.test(organizationId)) throw new TypeError("withOrganization needs a uuid");
  const head = [tenantStatement(db, organizationId, "")];
  return pipelined({ head }, () => db.transaction(work));
}
