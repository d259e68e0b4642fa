import { describe, expect, it } from "vitest";
import { LOOPBACK_HOSTS } from "./loopback.ts";
import { bearerMatches, metricsAccessFor, metricsDecision } from "./metrics.ts";

describe("metricsDecision", () => {
  const TOKEN = "metrics-token-0123456789abcdef";

  it("opens /metrics on a server bound to loopback that answers loopback names only", () => {
    expect(metricsDecision(metricsAccessFor("127.0.0.1", undefined), LOOPBACK_HOSTS)).toBe("open");
  });

  it("turns /metrics off on a server bound elsewhere without a token", () => {
    expect(metricsDecision(metricsAccessFor("0.0.0.0", undefined), LOOPBACK_HOSTS)).toBe("off");
    expect(metricsDecision({}, LOOPBACK_HOSTS)).toBe("off");
  });

  it("asks for the token on a server bound elsewhere, or answering a public name", () => {
    expect(metricsDecision(metricsAccessFor("0.0.0.0", TOKEN), LOOPBACK_HOSTS)).toBe("token");
    expect(
      metricsDecision(metricsAccessFor("127.0.0.1", TOKEN), [...LOOPBACK_HOSTS, "north.example"]),
    ).toBe("token");
  });
});

describe("bearerMatches", () => {
  it("accepts exactly `Bearer <token>`", () => {
    expect(bearerMatches("Bearer abc", "abc")).toBe(true);
    expect(bearerMatches("Bearer abcd", "abc")).toBe(false);
    expect(bearerMatches("bearer abc", "abc")).toBe(false);
    expect(bearerMatches("abc", "abc")).toBe(false);
    expect(bearerMatches(undefined, "abc")).toBe(false);
  });
});
