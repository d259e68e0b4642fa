import type { Principal, UnprovenCredential } from "./principal.ts";

/** Principals remembered at most this many, and at most this long (decision 036). */
const REMEMBERED_SIZE = 10_000;
const REMEMBERED_MS = 5 * 60 * 1000;

/**
 * The principals of credentials looked up recently — API tokens by their hash (decision 036),
 * North access tokens by the token (decision 041) — so a tool call need not look its credential
 * up before its transaction. Remembering grants nothing: a remembered
 * principal comes back `unproven`, and the transaction proves it in the database (or the request
 * is looked up again) before anything is answered, so expiry, revocation, removal and a changed
 * role take effect at once. What is kept is only what the last lookup said, for at most five
 * minutes; a lookup that finds nothing forgets the token. Bounded, oldest out first.
 */
export function createRememberedTokens(now: () => number = Date.now) {
  const entries = new Map<
    string,
    { principal: Principal; unproven: UnprovenCredential; until: number }
  >();
  return {
    /** The remembered principal of this credential, marked unproven; undefined if none. */
    recall(key: string): Principal | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until <= now()) {
        entries.delete(key);
        return undefined;
      }
      return { ...entry.principal, unproven: entry.unproven };
    },
    /**
     * What a lookup found for this credential: remembered with what its transactions prove
     * (`unproven`), or (null) forgotten.
     */
    learn(key: string, found: { principal: Principal; unproven: UnprovenCredential } | null): void {
      entries.delete(key);
      if (!found) return;
      if (entries.size >= REMEMBERED_SIZE) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(key, { ...found, until: now() + REMEMBERED_MS });
    },
  };
}

export type RememberedTokens = ReturnType<typeof createRememberedTokens>;
