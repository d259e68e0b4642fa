import type { EmbedderFailureClass } from "../tool-definition.ts";

/**
 * A circuit breaker in front of the embeddings provider: closed while it answers; open after
 * `failureThreshold` failures in a row, or at once on a 429 or a refused credential (asking again
 * cannot help), for a cool-down that doubles with each opening up to a cap (or exactly the
 * provider's Retry-After); then half-open, letting one probe through whose outcome closes or
 * reopens it. A pure state machine on an injected clock.
 */

export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerOptions {
  /** Failures in a row that open the breaker; default 3. */
  failureThreshold?: number;
  /** First cool-down; default 1 s. */
  cooldownMs?: number;
  /** Longest cool-down; default 60 s. */
  maxCooldownMs?: number;
  /** Epoch milliseconds. */
  now: () => number;
}

/** Whether a call may go out now, and if not, why and for how long. */
export type Admission =
  | { allowed: true; probe: boolean }
  | { allowed: false; class: EmbedderFailureClass; retryAfterMs?: number };

const OPENS_AT_ONCE: readonly EmbedderFailureClass[] = ["rate_limited", "credential_refused"];

export function createBreaker(options: BreakerOptions) {
  const threshold = options.failureThreshold ?? 3;
  const base = options.cooldownMs ?? 1_000;
  const cap = options.maxCooldownMs ?? 60_000;
  let state: BreakerState = "closed";
  let failures = 0;
  /** Openings since the provider last answered: the exponent of the cool-down. */
  let openings = 0;
  let openUntil = 0;
  let openedBy: EmbedderFailureClass = "unreachable";

  const open = (failureClass: EmbedderFailureClass, retryAfterMs: number | undefined) => {
    openings += 1;
    const cooldown = retryAfterMs ?? Math.min(cap, base * 2 ** (openings - 1));
    state = "open";
    openedBy = failureClass;
    openUntil = options.now() + cooldown;
  };

  return {
    state: (): BreakerState => state,

    /** Closed: yes. Open: no, until the cool-down passes; then yes, once, as the probe. */
    admit(): Admission {
      if (state === "closed") return { allowed: true, probe: false };
      if (state === "open") {
        const wait = openUntil - options.now();
        if (wait > 0) return { allowed: false, class: openedBy, retryAfterMs: wait };
        state = "half_open";
        return { allowed: true, probe: true };
      }
      // Half-open with the probe still out: everyone else waits for its outcome.
      return { allowed: false, class: openedBy };
    },

    succeeded() {
      state = "closed";
      failures = 0;
      openings = 0;
    },

    /** A failed call; `probe` says whether it was the half-open probe. */
    failed(failureClass: EmbedderFailureClass, retryAfterMs: number | undefined, probe: boolean) {
      if (probe) return open(failureClass, retryAfterMs);
      // A call that left before the breaker opened tells nothing new.
      if (state !== "closed") return;
      failures += 1;
      if (OPENS_AT_ONCE.includes(failureClass) || failures >= threshold) {
        failures = 0;
        open(failureClass, retryAfterMs);
      }
    },

    /** Milliseconds until the next probe may go out, while open. */
    retryInMs: (): number | undefined =>
      state === "open" ? Math.max(0, openUntil - options.now()) : undefined,
  };
}

export type Breaker = ReturnType<typeof createBreaker>;
