import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { migrateDatabase, provisionDatabase } from "@north/db";
import postgres from "postgres";
import { databaseUrl, loginUrl } from "../support/pg-urls.ts";
import type { TierADatabase } from "./north.ts";

const EMBEDDED_PROCESS = path.join(import.meta.dirname, "../support/embedded-postgres-process.ts");

export interface DisposableDatabase extends TierADatabase {
  drop(): Promise<void>;
}

/**
 * The database of a `bun run test:tier-a` run, outside vitest: a fresh database on
 * `DATABASE_URL`'s server, or on an embedded PostgreSQL in a child process (as the test run's
 * global setup starts it), migrated and provisioned with a login role of its own. `drop()`
 * removes all of it.
 */
export async function createDisposableDatabase(): Promise<DisposableDatabase> {
  const embedded = process.env.DATABASE_URL ? undefined : await startEmbedded();
  const serverUrl = process.env.DATABASE_URL ?? embedded?.url ?? "";
  const name = `north_tier_a_${randomBytes(4).toString("hex")}`;
  const login = { user: `${name}_app`, password: randomBytes(12).toString("hex") };
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const ownerUrl = databaseUrl(serverUrl, name);
  const drop = async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.unsafe(`DROP ROLE IF EXISTS ${login.user}`).catch(() => {});
    await admin.end({ timeout: 5 });
    await embedded?.stop();
  };
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await migrateDatabase(ownerUrl);
    await provisionDatabase(ownerUrl, { loginUser: login.user, loginPassword: login.password });
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    ownerUrl,
    appUrl: loginUrl(ownerUrl, login.user, login.password),
    pooler: "none",
    drop,
  };
}

/**
 * test/support/embedded-postgres-process.ts in a child: `embedded-postgres`'s exit hook must not
 * live in this process, whose exit code says whether every case held.
 */
async function startEmbedded(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn("bun", [EMBEDDED_PROCESS], { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`embedded PostgreSQL exited (${code}): ${err}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.stdin?.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
    },
  };
}
