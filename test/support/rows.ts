import type { Tenant } from "@north/db";
import type postgres from "postgres";

/** A member's working-profile rows, counted as the database owner sees them (no RLS). */
export async function profileRowsOf(owner: postgres.Sql, tenant: Tenant): Promise<number> {
  const [row] = await owner<{ n: number }[]>`
    select count(*)::int as n from working_profile_answers where owner_user_id = ${tenant.userId}`;
  return row?.n ?? 0;
}

/** The audit rows a member is the actor of, counted as the database owner sees them. */
export async function auditRowsOf(owner: postgres.Sql, tenant: Tenant): Promise<number> {
  const [row] = await owner<{ n: number }[]>`
    select count(*)::int as n from audit_events where actor_id = ${tenant.userId}`;
  return row?.n ?? 0;
}

/**
 * The id of a member's (one) consent to a host: what the console revokes. Throws when there is
 * none, so a fixture that never consented fails as such, not as a revocation that did nothing.
 */
export async function consentIdOf(owner: postgres.Sql, userId: string): Promise<string> {
  const [row] = await owner<{ id: string }[]>`
    select id from north_auth.oauth_consent where user_id = ${userId}`;
  if (!row) throw new Error("the member has no consent to revoke");
  return row.id;
}
