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
    ["Claude (claude\u2024ai)", "Claude"],
    ["claude\u200b.ai connector", "connector"],
    ["https\u200b://claude\u2024ai", "An unnamed app"],
    ["claude\u2060\u3002ai helper", "helper"],
    ["\uff43\uff4c\uff41\uff55\uff44\uff45\uff0e\uff41\uff49 desk", "desk"],
    ["claude\u00b7ai desk", "desk"],
    ["Matter\u200d\nDesk", "Matter Desk"],
    [null, "An unnamed app"],
  ])("shows %j as %j", (name, shown) => {
    expect(shownClientName(name)).toBe(shown);
  });

  it("cuts a long name", () => {
    expect(shownClientName("a".repeat(500))).toHaveLength(80);
  });
});
