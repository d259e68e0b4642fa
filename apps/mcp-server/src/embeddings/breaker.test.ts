import { describe, expect, it } from "vitest";
import { createBreaker } from "./breaker.ts";

function clocked(
  options: { failureThreshold?: number; cooldownMs?: number; maxCooldownMs?: number } = {},
) {
  let time = 1_000_000;
  const breaker = createBreaker({ ...options, now: () => time });
  return { breaker, advance: (ms: number) => (time += ms) };
}

describe("the embeddings circuit breaker", () => {
  it("lets calls through while closed and opens after the threshold of failures in a row", () => {
    const { breaker } = clocked({ failureThreshold: 3 });
    breaker.failed("unreachable", undefined, false);
    breaker.failed("timeout", undefined, false);
    expect(breaker.admit()).toEqual({ allowed: true, probe: false });
    breaker.failed("unreachable", undefined, false);
    expect(breaker.state()).toBe("open");
    expect(breaker.admit()).toEqual({ allowed: false, class: "unreachable", retryAfterMs: 1_000 });
  });

  it("counts only failures in a row: a success in between starts the count again", () => {
    const { breaker } = clocked({ failureThreshold: 3 });
    breaker.failed("unreachable", undefined, false);
    breaker.failed("unreachable", undefined, false);
    breaker.succeeded();
    breaker.failed("unreachable", undefined, false);
    breaker.failed("unreachable", undefined, false);
    expect(breaker.state()).toBe("closed");
  });

  it.each(["rate_limited", "credential_refused"] as const)(
    "opens at the first %s",
    (failureClass) => {
      const { breaker } = clocked({ failureThreshold: 5 });
      breaker.failed(failureClass, undefined, false);
      expect(breaker.admit()).toMatchObject({ allowed: false, class: failureClass });
    },
  );

  it("waits exactly the Retry-After it was given, not its own cool-down", () => {
    const { breaker, advance } = clocked({ cooldownMs: 1_000 });
    breaker.failed("rate_limited", 7_000, false);
    advance(6_999);
    expect(breaker.admit()).toEqual({ allowed: false, class: "rate_limited", retryAfterMs: 1 });
    advance(1);
    expect(breaker.admit()).toEqual({ allowed: true, probe: true });
  });

  it("half-opens with one probe: others are refused until it answers", () => {
    const { breaker, advance } = clocked();
    breaker.failed("credential_refused", undefined, false);
    advance(1_000);
    expect(breaker.admit()).toEqual({ allowed: true, probe: true });
    expect(breaker.state()).toBe("half_open");
    expect(breaker.admit()).toEqual({ allowed: false, class: "credential_refused" });
    breaker.succeeded();
    expect(breaker.state()).toBe("closed");
    expect(breaker.admit()).toEqual({ allowed: true, probe: false });
  });

  it("doubles the cool-down at each failed probe, up to the cap, and starts over after a success", () => {
    const { breaker, advance } = clocked({ cooldownMs: 1_000, maxCooldownMs: 5_000 });
    breaker.failed("credential_refused", undefined, false);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const wait = breaker.retryInMs() ?? 0;
      waits.push(wait);
      advance(wait);
      expect(breaker.admit()).toMatchObject({ allowed: true, probe: true });
      breaker.failed("unreachable", undefined, true);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    advance(5_000);
    breaker.admit();
    breaker.succeeded();
    breaker.failed("rate_limited", undefined, false);
    expect(breaker.retryInMs()).toBe(1_000);
  });

  it("ignores the failure of a call that left before the breaker opened", () => {
    const { breaker } = clocked();
    breaker.failed("rate_limited", 3_000, false);
    breaker.failed("unreachable", undefined, false);
    expect(breaker.admit()).toEqual({ allowed: false, class: "rate_limited", retryAfterMs: 3_000 });
  });
});
