import { type Database, withTenant } from "@north/db";
import { authorize, CAPABILITIES } from "./capabilities/index.ts";
import type { Principal, Scope } from "./principal.ts";
import type { Capability } from "./tool-definition.ts";

export interface StepUpOptions {
  db: Database;
  capabilities?: readonly Capability[];
  /** Keyed fingerprint (hex) of a subject's canonical text, as the tools get it. */
  fingerprintSubject: (canonical: string) => string;
  /**
   * The request's principal proven (decision 041): a remembered one is looked up before its
   * step-up transaction reads anything for it.
   */
  prove: () => Promise<Principal>;
}

/**
 * For a tools/call (or a batch holding some) whose tool asks for more than its capability's
 * scopes for this principal and input (`ToolDefinition.stepUp`): the scopes to re-authorize
 * with — the token's own plus the missing ones, as MCP 2025-11-25's step-up challenge names
 * them — and the JSON-RPC id to answer. Decided before any message of the request runs, in one
 * read-only tenant transaction, so the retried request does the whole work once (decision 030).
 */
export async function stepUpScopes(
  principal: Principal,
  body: unknown,
  options: StepUpOptions,
): Promise<{ scopes: readonly string[]; id: unknown } | undefined> {
  const all = options.capabilities ?? CAPABILITIES;
  const calls = (Array.isArray(body) ? body : [body]).flatMap((message) => {
    if (!message || typeof message !== "object") return [];
    const { method, params, id } = message as {
      method?: unknown;
      params?: { name?: unknown; arguments?: unknown };
      id?: unknown;
    };
    if (method !== "tools/call") return [];
    if (typeof params?.name !== "string") return [];
    const name = params.name;
    const decision = authorize(principal, "tools/call", name, all);
    const tool = decision.allowed
      ? decision.capability.tools.find((candidate) => candidate.name === name)
      : undefined;
    if (!tool?.stepUp) return [];
    // Input the tool would refuse gets the tool's own answer, not a step-up.
    const input = tool.inputSchema.safeParse(params?.arguments ?? {});
    return input.success ? [{ tool, input: input.data, id: id ?? null }] : [];
  });
  if (calls.length === 0) return undefined;
  // Nothing is read, and no step-up answered, for a credential not yet proven to hold.
  if (principal.unproven) {
    const proven = await options.prove();
    if (proven.unproven) throw new Error("step-up needs a proven principal");
    return stepUpScopes(proven, body, options);
  }
  const tenant = { organizationId: principal.organizationId, userId: principal.userId };
  return withTenant(options.db, tenant, async (tx) => {
    for (const call of calls) {
      const needed = await call.tool.stepUp?.(call.input, {
        tx,
        principal,
        tenant,
        fingerprintSubject: options.fingerprintSubject,
      });
      const missing = (needed ?? []).filter((scope: Scope) => !principal.scopes.includes(scope));
      // Only a step-up that can succeed: a grant opened by a token without `admin` would loop
      // on the same 403 (and the answer alone would tell whether colleagues wrote about it).
      const { reauthorizable } = principal;
      const reachable = !reauthorizable || missing.every((scope) => reauthorizable.includes(scope));
      if (missing.length > 0 && reachable) {
        return { scopes: [...principal.scopes, ...missing], id: call.id };
      }
    }
    return undefined;
  });
}
