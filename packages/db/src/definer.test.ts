import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DECLARED_DEFINERS } from "./definer.ts";
import { DEFINER_FUNCTIONS } from "./definer-functions.ts";

/** Every source module of the package, so each domain declares its definer functions. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith(".ts") && !entry.name.includes(".test.") ? [file] : [];
  });
}

describe("the definer functions provisioning installs (decision 003)", () => {
  it("lists every function the package declares, once each", async () => {
    for (const file of sources(import.meta.dirname)) await import(file);
    const listed = DEFINER_FUNCTIONS.map((fn) => fn.name);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(DECLARED_DEFINERS.map((fn) => fn.name).sort());
  });
});
