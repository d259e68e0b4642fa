import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ALLOCATOR_KEEPS_PAGES, ALLOCATOR_SETTING, allocatorKeepsPages } from "./allocator.ts";

const scripts = (
  JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;

describe("the server's allocator (decision 046)", () => {
  // mimalloc reads the setting before any JavaScript runs: only the starting command can set it.
  it.each(["start", "north", "bench"])("`bun run %s` starts Bun with freed pages kept", (name) => {
    const script = scripts[name] ?? "";
    const launch = script.split("&&").at(-1)?.trim() ?? "";
    expect(launch.startsWith(`${ALLOCATOR_SETTING}=${ALLOCATOR_KEEPS_PAGES} bun `)).toBe(true);
  });

  it("keeps pages only with the value that says so", () => {
    expect(allocatorKeepsPages("-1")).toBe(true);
    expect(allocatorKeepsPages("10")).toBe(false);
    expect(allocatorKeepsPages(undefined)).toBe(false);
  });
});
