import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configSchema, variableDoc } from "./config.ts";
import { configTable, TABLE_BEGIN, TABLE_END, withConfigTable } from "./config-docs.ts";

const ROOT = path.join(import.meta.dirname, "..", "..", "..");

describe("the configuration's one source", () => {
  it("the README's table is the one the schema generates (bun scripts/config-docs.ts)", async () => {
    const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
    expect(readme).toContain(TABLE_BEGIN);
    expect(readme).toContain(TABLE_END);
    expect(withConfigTable(readme)).toBe(readme);
  });

  it("documents every variable of the schema, one row each", () => {
    const table = configTable();
    for (const [name, field] of Object.entries(configSchema.shape)) {
      expect(variableDoc(field as z.ZodType), name).toBeDefined();
      expect(table.split("\n").filter((row) => row.startsWith(`| \`${name}\` `))).toHaveLength(1);
    }
  });

  it("refuses a variable without a description, naming it", () => {
    const schema = z.object({ NORTH_UNDOCUMENTED: z.string().optional() });
    expect(() => configTable(schema)).toThrow(/NORTH_UNDOCUMENTED has no documentation/);
  });

  it("shows the schema's default where no other is documented", () => {
    expect(configTable()).toMatch(/\| `NORTH_PORT` +\| [^|]+\| `7410` +\|/);
  });

  it("is the only product code that reads the environment", async () => {
    const readers: string[] = [];
    for (const group of ["apps", "packages"]) {
      for (const entry of await readdir(path.join(ROOT, group), { recursive: true })) {
        const file = path.join(group, entry);
        if (file.includes("node_modules")) continue;
        if (!/^[^/]+\/[^/]+\/src\/.*\.ts$/.test(file) || file.endsWith(".test.ts")) continue;
        if (file === "apps/north/src/config.ts") continue;
        const source = await readFile(path.join(ROOT, file), "utf8");
        if (/process\.env\b/.test(source)) readers.push(file);
      }
    }
    expect(readers).toEqual([]);
  });
});
