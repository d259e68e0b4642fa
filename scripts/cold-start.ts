/**
 * `bun scripts/cold-start.ts`: measures `bun run start` from the command to the first successful
 * tool call, on a fresh `.north/` (first run: initdb included) and again on the same folder
 * (restart). A measurement, not a test: it prints the figures.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freePort } from "@north/db";

const home = await mkdtemp(path.join(tmpdir(), "north-cold-"));
const port = String(await freePort());

async function once(label: string): Promise<void> {
  const started = performance.now();
  const child = spawn("bun", ["run", "start"], {
    cwd: path.resolve(import.meta.dirname, ".."),
    env: { ...process.env, NORTH_HOME: home, NORTH_PORT: port },
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  while (!/READY (\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`start exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const url = /READY (\S+)/.exec(out)?.[1] ?? "";
  const token = (await readFile(path.join(home, "token"), "utf8")).trim();
  const client = new Client({ name: "cold-start", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const result = await client.callTool({ name: "north__working_profile", arguments: {} });
  const elapsed = (performance.now() - started) / 1000;
  if (result.isError) throw new Error("first tool call failed");
  console.log(`${label}: ${elapsed.toFixed(2)} s from command to first successful tool call`);
  await client.close();
  if (child.pid) process.kill(-child.pid, "SIGINT");
  await new Promise((r) => child.on("exit", r));
}

try {
  await once("first start (fresh .north, initdb)");
  await once("restart (same .north)");
} finally {
  await rm(home, { recursive: true, force: true });
}
