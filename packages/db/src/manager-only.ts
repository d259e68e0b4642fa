import type { SQL } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { hasSqlState } from "./pg-errors.ts";

/**
 * Calls a manager-only SECURITY DEFINER function (see definer-functions.ts). Its refusal (42501:
 * not a manager, or not the tenant) is raised inside a savepoint and comes back as `undefined`,
 * so the surrounding transaction, and its audit insert, carries on.
 */
export async function callManagerOnly<Row extends Record<string, unknown>>(
  tx: Tx,
  call: SQL,
): Promise<Row[] | undefined> {
  try {
    return await tx.transaction(async (inner) => [...(await inner.execute<Row>(call))] as Row[]);
  } catch (error) {
    if (hasSqlState(error, "42501")) return undefined;
    throw error;
  }
}
