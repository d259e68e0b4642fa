/**
 * The disposable database every benchmark runs on (`bun run bench`, `bench:recall`, `soak`):
 * a fresh database on `DATABASE_URL`'s server, or on an embedded PostgreSQL in a temporary
 * folder, migrated and provisioned with an app login role of its own. `drop()` removes all of it.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrateDatabase, provisionDatabase } from "@north/db";
import { startEmbeddedPostgres } from "@north/db/embedded";
import postgres from "postgres";

export interface BenchDatabase {
  /** A temporary folder for the run's files, removed by `drop()`. */
  scratch: string;
  /** True on the embedded PostgreSQL, false on `DATABASE_URL`'s server. */
  embedded: boolean;
  /** Superuser / owner URL of the bench database. */
  ownerUrl: string;
  /** The app login role on it. */
  appUrl: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(name: string): Promise<BenchDatabase> {
  const scratch = await mkdtemp(path.join(tmpdir(), `${name.replaceAll("_", "-")}-`));
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: path.join(scratch, "pg"),
        password: randomBytes(12).toString("hex"),
        persistent: false,
        // PostgreSQL's default is 128 MB, sized for the smallest machines; a production server
        // holds its working set in memory (docs/benchmarks.md). pgbench shares the setting.
        settings: { shared_buffers: process.env.BENCH_SHARED_BUFFERS ?? "2GB" },
      });
  const serverUrl = process.env.DATABASE_URL ?? embedded?.url("postgres") ?? "";
  const dbName = `${name}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const drop = async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    await embedded?.stop();
    await rm(scratch, { recursive: true, force: true });
  };
  const owner = new URL(serverUrl);
  owner.pathname = `/${dbName}`;
  const login = { user: `${name}_app`, password: randomBytes(12).toString("hex") };
  const app = new URL(owner);
  app.username = login.user;
  app.password = login.password;
  try {
    await admin.unsafe(`CREATE DATABASE ${dbName}`);
    await migrateDatabase(owner.toString());
    await provisionDatabase(owner.toString(), {
      loginUser: login.user,
      loginPassword: login.password,
    });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    scratch,
    embedded: embedded !== undefined,
    ownerUrl: owner.toString(),
    appUrl: app.toString(),
    drop,
  };
}
