import type { Principal } from "./principal.ts";

/** Principals remembered at most this many, and at most this long (decision 036). */
const REMEMBERED_SIZE = 10_000;
const REMEMBERED_MS = 5 * 60 * 1000;

/**
 * The principals of API tokens looked up recently, by token hash, so a tool call need not look
 * its token up before its transaction (decision 036). Remembering grants nothing: a remembered
 * principal comes back `unproven`, and the transaction proves it in the database (or the request
 * is looked up again) before anything is answered, so expiry, revocation, removal and a changed
 * role take effect at once. What is kept is only what the last lookup said, for at most five
 * minutes; a lookup that finds nothing forgets the token. Bounded, oldest out first.
 */
export function createRememberedTokens(now: () => number = Date.now) {
  const entries = new Map<string, { principal: Principal; until: number }>();
  return {
    /** The remembered principal of this token hash, marked unproven; undefined if none. */
    recall(apiTokenHash: string): Principal | undefined {
      const entry = entries.get(apiTokenHash);
      if (!entry) return undefined;
      if (entry.until <= now()) {
        entries.delete(apiTokenHash);
        return undefined;
      }
      return { ...entry.principal, unproven: { apiTokenHash } };
    },
    /** What a lookup found for this token hash: remembered, or (null) forgotten. */
    learn(apiTokenHash: string, principal: Principal | null): void {
      entries.delete(apiTokenHash);
      if (!principal) return;
      if (entries.size >= REMEMBERED_SIZE) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(apiTokenHash, { principal, until: now() + REMEMBERED_MS });
    },
  };
}

export type RememberedTokens = ReturnType<typeof createRememberedTokens>;
