import type { ApiTokenProof, GrantProof } from "@north/db";

/** Scopes a principal may hold (SPEC §3). */
export const SCOPES = ["profile:write", "memory:read", "memory:write", "admin"] as const;
export type Scope = (typeof SCOPES)[number];
/**
 * The scopes every member may hold: what the protected-resource metadata and the 401 challenge
 * name, so a host that asks for everything listed never asks for `admin` (decision 030).
 */
export const MEMBER_SCOPES = SCOPES.filter((scope) => scope !== "admin");

/**
 * Who is calling. Always produced by an {@link AuthResolver} from credentials, never from tool
 * input: organization, user and scopes are what every tenant transaction and audit row uses.
 */
export interface Principal {
  organizationId: string;
  userId: string;
  role: "member" | "manager";
  scopes: readonly Scope[];
  /** The API token (or OAuth token id) that authenticated the request, when there is one. */
  tokenId: string | null;
  /**
   * For an OAuth grant: the scopes a re-authorization of it could add (the role's entitlement
   * within what opened the grant), so a step-up is asked only when it can succeed. Absent when
   * North cannot tell (an external authorization server's token: step-up is asked) and for API
   * tokens (never stepped up: their holders chose their scopes).
   */
  reauthorizable?: readonly Scope[];
  /**
   * Set when North remembered this principal instead of looking its credential up for this
   * request (decision 036): the hash of the API token presented, or the grant a North access
   * token names (decision 041). The principal is then only a plan: the tool call's transaction
   * proves it in the database before its work runs, and a request that runs none is looked up
   * before it is answered.
   */
  unproven?: UnprovenCredential;
}

/** What a remembered principal's transaction proves (decisions 036 and 041). */
export type UnprovenCredential =
  | Pick<ApiTokenProof, "apiTokenHash">
  | { grant: Omit<GrantProof, "role"> };

export interface ResolveOptions {
  /**
   * The caller will prove the principal before answering (POST /mcp, decision 036), so one
   * remembered from an earlier request may be returned, marked `unproven`. Default: looked up.
   */
  mayRemember?: boolean;
}

/** Resolves a request's credentials to a principal, or `null` when there are none or bad ones. */
export type AuthResolver = (
  request: Request,
  options?: ResolveOptions,
) => Promise<Principal | null>;

export function hasScopes(principal: Principal, required: readonly Scope[]): boolean {
  return required.every((scope) => principal.scopes.includes(scope));
}
