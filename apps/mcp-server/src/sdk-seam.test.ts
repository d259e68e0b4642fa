import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** Decision 005: the MCP SDK is imported by the seam's two files and nothing else in North. */
const SEAM = ["apps/mcp-server/src/server-transports.ts", "apps/mcp-server/src/server.ts"];
const ROOT = path.join(import.meta.dirname, "..", "..", "..");

describe("the SDK seam", () => {
  it("only server.ts and server-transports.ts import @modelcontextprotocol/server", async () => {
    const importers: string[] = [];
    for (const group of ["apps", "packages"]) {
      for (const entry of await readdir(path.join(ROOT, group), { recursive: true })) {
        const file = path.join(group, entry);
        if (file.includes("node_modules") || !/^[^/]+\/[^/]+\/src\/.*\.ts$/.test(file)) continue;
        if (file.endsWith(".test.ts")) continue;
        const source = await readFile(path.join(ROOT, file), "utf8");
        if (/from "@modelcontextprotocol\/server/.test(source)) importers.push(file);
      }
    }
    expect(importers.sort()).toEqual(SEAM);
  });
});
