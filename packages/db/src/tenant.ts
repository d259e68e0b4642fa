import { ENTER_AS_API_TOKEN_FUNCTION } from "./api-tokens.ts";
import { type Database, type Tx, transactionTimeoutMs } from "./client.ts";
import { adoptConnection, pipelined, type RawStatement } from "./pipelined-transaction.ts";
import { TENANT_ORGANIZATION_SETTING, TENANT_USER_SETTING } from "./schema/index.ts";
import { ENTER_AS_OAUTH_GRANT_FUNCTION } from "./sign-in.ts";

/** Whose request this is. Always taken from the authenticated principal, never from input. */
export interface Tenant {
  organizationId: string;
  userId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * How a tenant transaction shows the database that its principal still holds, when North took
 * the principal from memory instead of looking its credential up for this request (decision
 * 036): for an API token, the hash of the token presented and what the remembered principal says
 * it resolves to; for a North access token (decision 041), the grant it was issued under and
 * what the remembered principal says the grant resolves to.
 */
export type TenantProof = ApiTokenProof | GrantProof;

export interface ApiTokenProof {
  apiTokenHash: string;
  tokenId: string;
  role: "member" | "manager";
  /** The token's scopes as the remembered lookup found them. */
  scopes: readonly string[];
}

export interface GrantProof {
  /** The OAuth client the token was issued to (`client_id`). */
  clientId: string;
  /** The grant the token names (`north_grant`). */
  grantId: string;
  role: "member" | "manager";
  /** The grant's scope cap as the remembered lookup found it; null for none. */
  scopeCap: readonly string[] | null;
}

/** The statement that proves `proof` for `tenant` and sets the tenant only if it holds. */
export function enterStatement(tenant: Tenant, proof: TenantProof): RawStatement {
  if ("apiTokenHash" in proof) {
    return {
      text: `select public.${ENTER_AS_API_TOKEN_FUNCTION}($1, $2, $3, $4, $5, $6)`,
      params: [
        proof.apiTokenHash,
        proof.tokenId,
        tenant.organizationId,
        tenant.userId,
        proof.role,
        proof.scopes.join(" "),
      ],
    };
  }
  return {
    text: `select public.${ENTER_AS_OAUTH_GRANT_FUNCTION}($1, $2, $3, $4, $5, $6)`,
    params: [
      tenant.userId,
      proof.clientId,
      proof.grantId,
      tenant.organizationId,
      proof.role,
      proof.scopeCap === null ? null : proof.scopeCap.join(" "),
    ],
  };
}

/**
 * The statement that opens a tenant transaction: the tenant — set by `set_config(…, true)`, or,
 * with a proof, by `enter_as_api_token` or `enter_as_oauth_grant`, which set it only once the
 * credential is proven — and,
 * behind a transaction pooler, whose connections carry no timeouts of their own (client.ts), the
 * timeouts. Every setting ends with the transaction, so a pooled connection never carries one
 * request's tenant into the next.
 */
function tenantStatement(db: Database, tenant: Tenant, proof?: TenantProof): RawStatement {
  const ms = transactionTimeoutMs(db);
  const enter = proof
    ? enterStatement(tenant, proof)
    : {
        text: "select set_config($1, $2, true), set_config($3, $4, true)",
        params: [
          TENANT_ORGANIZATION_SETTING,
          tenant.organizationId,
          TENANT_USER_SETTING,
          tenant.userId,
        ],
      };
  if (ms === undefined) return enter;
  const n = enter.params.length + 1;
  return {
    text: `${enter.text}, set_config('statement_timeout', $${n}, true), set_config('idle_in_transaction_session_timeout', $${n}, true)`,
    params: [...enter.params, String(ms)],
  };
}

/**
 * Runs `work` in one transaction on the given pool with the tenant set first. Policies read
 * the tenant; without it every tenant table reads as empty. The tenant goes out with BEGIN and
 * the work's first statement in one write, and `tail` (the audit row of a tool call, built from
 * the work's result) with COMMIT (decision 035): a tool call is two round trips. With a
 * `proof`, the tenant is set by the database only once the token proves to still name it
 * (decision 036), so a request need not look its token up before the call.
 */
export async function withTenant<T>(
  db: Database,
  tenant: Tenant,
  work: (tx: Tx) => Promise<T>,
  tail?: (result: T) => readonly RawStatement[],
  options: { proof?: TenantProof } = {},
): Promise<T> {
  if (!UUID.test(tenant.organizationId) || !UUID.test(tenant.userId)) {
    throw new TypeError("withTenant needs uuid organization and user ids");
  }
  const head = [tenantStatement(db, tenant, options.proof)];
  return pipelined({ head, tail }, () =>
    db.transaction((tx) => {
      adoptConnection(tx);
      return work(tx);
    }),
  );
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
  const head = [tenantStatement(db, { organizationId, userId: "" })];
  return pipelined({ head }, () =>
    db.transaction((tx) => {
      adoptConnection(tx);
      return work(tx);
    }),
  );
}
