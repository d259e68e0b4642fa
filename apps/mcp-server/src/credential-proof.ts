import type { TenantProof } from "@north/db";
import type { Principal } from "./principal.ts";

/**
 * One request's remembered principal on its way to being proven (decision 036): the proof its
 * tool-call transaction sends, and what came of it — `proven` once a transaction holding it
 * committed or at least got past it, `refused` when the database said the token no longer names
 * this principal (the transaction was aborted before its work ran), `pending` while neither.
 * The route answers only a proven request; any other is looked up again first.
 */
export interface CredentialProof {
  readonly proof: TenantProof;
  state: "pending" | "proven" | "refused";
}

/** The proof a remembered principal's transactions send; undefined for one looked up. */
export function proofFor(principal: Principal): CredentialProof | undefined {
  const { unproven } = principal;
  if (!unproven) return undefined;
  if ("grant" in unproven) {
    return { proof: { ...unproven.grant, role: principal.role }, state: "pending" };
  }
  if (!principal.tokenId) return undefined;
  return {
    proof: {
      apiTokenHash: unproven.apiTokenHash,
      tokenId: principal.tokenId,
      role: principal.role,
      scopes: principal.scopes,
    },
    state: "pending",
  };
}

/**
 * Whether a lookup found the principal a request was served as: same member, role, token and
 * set of scopes (compared as sets both ways: a list may repeat a scope).
 */
export function samePrincipal(a: Principal, b: Principal): boolean {
  return (
    a.organizationId === b.organizationId &&
    a.userId === b.userId &&
    a.role === b.role &&
    a.tokenId === b.tokenId &&
    a.scopes.every((scope) => b.scopes.includes(scope)) &&
    b.scopes.every((scope) => a.scopes.includes(scope))
  );
}
