import type { SignInRecord } from "@north/db";
import { SCOPES } from "../principal.ts";
import { OFFLINE_ACCESS } from "./authorization-server.ts";

/** What a member may be granted: everything but `admin`, which only managers hold. */
export function entitlement(role: "member" | "manager"): string[] {
  return [...SCOPES.filter((s) => s !== "admin" || role === "manager"), OFFLINE_ACCESS];
}

/**
 * What a recorded sign-in may grant: the role's entitlement, and for a pasted API token at most
 * that token's scopes (a read-only token never becomes a read-write connector, a manager's
 * read-only token never `admin`). The cap comes from the server's record of the session
 * (decision 029), never from anything the browser holds.
 */
export function grantableScopes(role: "member" | "manager", record: SignInRecord): string[] {
  const allowed = entitlement(role);
  if (record.method === "idp") return allowed;
  return allowed.filter((s) => s === OFFLINE_ACCESS || record.scopeCap.includes(s));
}
