import { describe, expect, it } from "vitest";
import { shownClientName } from "./consent-client.ts";

describe("shownClientName", () => {
  it.each([
    ["Claude (https://claude.ai)", "Claude"],
    ["Claude [claude.ai]", "Claude"],
    ["claude。ai helper", "helper"],
    ["Sign in at http://127.0.0.1:9/x now", "Sign in at now"],
    ["Matter Desk 2.5", "Matter Desk 2.5"],
    ["https://claude.ai", "An unnamed app"],
    [null, "An unnamed app"],
  ])("shows %j as %j", (name, shown) => {
    expect(shownClientName(name)).toBe(shown);
  });

  it("cuts a long name", () => {
    expect(shownClientName("a".repeat(500))).toHaveLength(80);
  });
});
