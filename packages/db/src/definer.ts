/**
 * The SECURITY DEFINER functions provisioning owns (SPEC §6). Each is dropped and re-created on
 * every `north provision`, owned by `forma`, executable by its one grantee and nobody else:
 * `app_role`, or {@link MAINTENANCE_ROLE} for the few that span organisations (decision 031).
 *
 * {@link definerFunction} writes the part every one of them must share — `SECURITY DEFINER`,
 * `search_path` pinned to `pg_catalog, pg_temp` (so a temporary table named like one of ours is
 * never looked up) and plpgsql's `use_column` rule — so no definition can forget it. Bodies
 * schema-qualify every relation.
 */

/**
 * The group role holding EXECUTE on the definer functions that span organisations (decision
 * 031). Its login is a role of its own: the app login is never a member, so the request path
 * cannot run them at all (PostgreSQL 15 has no per-membership NOINHERIT to fence them off).
 */
export const MAINTENANCE_ROLE = "north_maintenance";

export interface DefinerFunction {
  name: string;
  /** Argument types only, as `DROP`/`ALTER`/`GRANT` name the function: `uuid, uuid`. */
  argTypes: string;
  /** The one role granted EXECUTE. */
  grantee: "app_role" | typeof MAINTENANCE_ROLE;
  /** The full `CREATE FUNCTION` statement. */
  sql: string;
}

/** Every function {@link definerFunction} has built, in the order the modules declared them. */
export const DECLARED_DEFINERS: DefinerFunction[] = [];

export function definerFunction(spec: {
  name: string;
  /**
   * Who may run it; default `app_role`, whose functions each read the organisation from the
   * transaction's tenant settings or are a pre-tenant lookup (decision 031). A function that
   * spans organisations is the maintenance role's.
   */
  grantee?: DefinerFunction["grantee"];
  /** Named parameters: `p_organization_id uuid, p_requester_id uuid`. */
  params: string;
  returns: string;
  volatility: "STABLE" | "VOLATILE";
  /**
   * For a set-returning function, the rows the planner should expect (PostgreSQL assumes 1,000):
   * a caller joining the result then looks its rows up by key instead of scanning for them.
   */
  rows?: number;
  /** Settings the function runs with, restored when it returns: `lock_timeout = '2s'`. */
  settings?: string[];
  /** From `BEGIN` to `END`. */
  body: string;
}): DefinerFunction {
  const argTypes = spec.params
    .split(",")
    .map((param) => param.trim().split(/\s+/).slice(1).join(" "))
    .filter(Boolean)
    .join(", ");
  const declared: DefinerFunction = {
    name: spec.name,
    argTypes,
    grantee: spec.grantee ?? "app_role",
    sql: `
CREATE FUNCTION public.${spec.name}(${spec.params})
RETURNS ${spec.returns}
LANGUAGE plpgsql
${spec.volatility}${spec.rows ? `\nROWS ${spec.rows}` : ""}
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp${(spec.settings ?? []).map((setting) => `\nSET ${setting}`).join("")}
AS $fn$
#variable_conflict use_column
${spec.body}
$fn$`,
  };
  DECLARED_DEFINERS.push(declared);
  return declared;
}

/**
 * The opening of every manager-only function: the requester must be the transaction's tenant
 * (so a caller cannot name someone else) and a manager of that organization; anything else
 * raises 42501.
 */
export const MANAGER_GUARD = `
  IF p_organization_id IS NULL OR p_requester_id IS NULL
     OR p_organization_id IS DISTINCT FROM nullif(current_setting('north.organization_id', true), '')::uuid
     OR p_requester_id IS DISTINCT FROM nullif(current_setting('north.user_id', true), '')::uuid THEN
    RAISE EXCEPTION 'requester does not match the transaction tenant' USING ERRCODE = '42501';
  END IF;
  IF NOT EXISTS (
    SELECT 1 FROM public.members m
    WHERE m.organization_id = p_organization_id
      AND m.user_id = p_requester_id
      AND m.role = 'manager'
      AND m.removed_at IS NULL
  ) THEN
    RAISE EXCEPTION 'requester is not a manager of this organization' USING ERRCODE = '42501';
  END IF;`;
