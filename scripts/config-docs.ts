/**
 * Writes the README's configuration table from the zod schema (apps/north/src/config.ts), the
 * one source of what each environment variable means. `--check` writes nothing and exits 1 when
 * the README differs; the unit test apps/north/src/config-docs.test.ts checks the same.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { withConfigTable } from "../apps/north/src/config-docs.ts";

const README = path.join(import.meta.dirname, "..", "README.md");
const current = await readFile(README, "utf8");
const generated = withConfigTable(current);
if (process.argv.includes("--check")) {
  if (generated !== current) {
    console.error(
      "README.md's configuration table differs from the schema: run bun scripts/config-docs.ts",
    );
    process.exit(1);
  }
} else if (generated !== current) {
  await writeFile(README, generated);
  console.log("README.md's configuration table written from the schema");
}
