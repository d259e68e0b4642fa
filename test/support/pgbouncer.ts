import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "@north/db";

/**
 * Debian's PgBouncer in transaction pooling mode, in front of the run's PostgreSQL, on a random
 * port from a generated configuration (SPEC §10): every database of that server, the app login
 * role only. Private to the test run and removed with it.
 */
export interface PgBouncer {
  /** `postgres://127.0.0.1:<port>/postgres`, to be given a user and a database. */
  url: string;
  stop(): Promise<void>;
}

const BINARY = process.env.PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";

export async function startPgBouncer(options: {
  serverUrl: string;
  user: string;
  password: string;
}): Promise<PgBouncer> {
  const server = new URL(options.serverUrl);
  const folder = await mkdtemp(path.join(tmpdir(), "north-pgbouncer-"));
  const port = await freePort();
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
  await writeFile(
    path.join(folder, "userlist.txt"),
    `${quote(options.user)} ${quote(options.password)}\n`,
  );
  await writeFile(
    path.join(folder, "pgbouncer.ini"),
    `[databases]
* = host=${server.hostname} port=${server.port || 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = ${path.join(folder, "userlist.txt")}
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
logfile = ${path.join(folder, "pgbouncer.log")}
`,
  );
  // PgBouncer refuses to run as root; under root it runs as the postgres system user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    await chmod(folder, 0o777);
    for (const file of ["userlist.txt", "pgbouncer.ini"]) {
      await chmod(path.join(folder, file), 0o644);
    }
  }
  const args = [...(asRoot ? ["-u", "postgres"] : []), path.join(folder, "pgbouncer.ini")];
  const child: ChildProcess = spawn(BINARY, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = await readFile(path.join(folder, "pgbouncer.log"), "utf8").catch(() => "");
      await rm(folder, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start: ${stderr}${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `postgres://127.0.0.1:${port}/postgres`,
    async stop() {
      child.kill("SIGINT");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000).unref())]);
      if (child.exitCode === null) child.kill("SIGKILL");
      await rm(folder, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
