import { sql } from "drizzle-orm";
import { type Database, type Tx, transactionTimeoutMs } from "./client.ts";
import { TENANT_ORGANIZATION_SETTING, TENANT_USER_SETTING } from "./schema/index.ts";

/** Whose request this is. Always taken from the authenticated principal, never from input. */
export interface Tenant {
  organizationId: string;
  userId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Behind a transaction pooler the connection carries no timeouts of its own (client.ts), so
 * each tenant transaction sets them for itself, in the statement that sets the tenant.
 */
function timeouts(db: Database) {
  const ms = transactionTimeoutMs(db);
  return ms === undefined
    ? sql``
    : sql`, set_config('statement_timeout', ${String(ms)}, true), set_config('idle_in_transaction_session_timeout', ${String(ms)}, true)`;
}

/**
 * Runs `work` in one transaction on the given pool after setting the tenant with
 * `set_config(…, true)`, so the setting ends with the transaction and a pooled connection never
 * carries one request's tenant into the next. Policies read these settings; without them every
 * tenant table reads as empty.
 */
export async function withTenant<T>(
  db: Database,
  tenant: Tenant,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  if (!UUID.test(tenant.organizationId) || !UUID.test(tenant.userId)) {
    throw new TypeError("withTenant needs uuid organization and user ids");
  }
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select set_config(${TENANT_ORGANIZATION_SETTING}, ${tenant.organizationId}, true), set_config(${TENANT_USER_SETTING}, ${tenant.userId}, true)${timeouts(db)}`,
    );
    return work(tx);
  });
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
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select set_config(${TENANT_ORGANIZATION_SETTING}, ${organizationId}, true), set_config(${TENANT_USER_SETTING}, '', true)${timeouts(db)}`,
    );
    return work(tx);
  });
}
