import { sql } from "drizzle-orm";

/** The transaction-local settings that carry the tenant (SPEC §6). */
export const TENANT_ORGANIZATION_SETTING = "north.organization_id";
export const TENANT_USER_SETTING = "north.user_id";

/**
 * The tenant as policies see it. `nullif(…, '')` matters: once a transaction that set the value
 * ends, the setting reads as the empty string for the rest of the session, not as NULL, and an
 * empty string must match nothing rather than fail the uuid cast.
 */
/** The same two expressions as text, for statements sent below Drizzle. */
export const CURRENT_ORGANIZATION_ID_SQL = `nullif(current_setting('${TENANT_ORGANIZATION_SETTING}', true), '')::uuid`;
export const CURRENT_USER_ID_SQL = `nullif(current_setting('${TENANT_USER_SETTING}', true), '')::uuid`;

export const currentOrganizationId = sql.raw(CURRENT_ORGANIZATION_ID_SQL);
export const currentUserId = sql.raw(CURRENT_USER_ID_SQL);
