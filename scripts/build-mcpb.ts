/**
 * `bun run build:mcpb`: the Claude Desktop extension (SPEC §3b), `dist/north.mcpb`. Stages
 * the repository's manifest.json beside a fresh Node bundle (`dist/north.mjs`, what the
 * manifest's mcp_config runs) and the migrations the bundle looks for at load, then packs the
 * folder with the pinned `mcpb` CLI, which validates the manifest first. `--out PATH` writes the
 * bundle elsewhere (the test does, leaving dist/ alone).
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { bundle } from "./bundle.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const MCPB = path.join(ROOT, "node_modules/.bin/mcpb");

/** Builds the extension at `out` (absolute, or from the repository root). */
export async function buildMcpb(out = "dist/north.mcpb"): Promise<string> {
  const target = path.resolve(ROOT, out);
  const stage = await mkdtemp(path.join(tmpdir(), "north-mcpb-"));
  try {
    await cp(path.join(ROOT, "manifest.json"), path.join(stage, "manifest.json"));
    bundle(path.join(stage, "dist/north.mjs"));
    // The migrator's files only (SQL and journal), not drizzle-kit's snapshots.
    const migrations = path.join(stage, "drizzle");
    await mkdir(path.join(migrations, "meta"), { recursive: true });
    await cp(
      path.join(ROOT, "drizzle/meta/_journal.json"),
      path.join(migrations, "meta/_journal.json"),
    );
    for (const file of await readdir(path.join(ROOT, "drizzle"))) {
      if (file.endsWith(".sql"))
        await cp(path.join(ROOT, "drizzle", file), path.join(migrations, file));
    }
    await mkdir(path.dirname(target), { recursive: true });
    const packed = spawnSync(MCPB, ["pack", stage, target], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (packed.status !== 0) throw new Error(`mcpb pack exited with ${packed.status}`);
    return target;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

// Bun sets import.meta.main for the file it runs; imported (by a test), this does nothing.
if ((import.meta as ImportMeta & { main?: boolean }).main) {
  const at = process.argv.indexOf("--out");
  const out = at >= 0 ? process.argv[at + 1] : undefined;
  if (at >= 0 && !out) throw new Error("--out needs a path");
  process.stdout.write(`wrote ${path.relative(ROOT, await buildMcpb(out))}\n`);
}
