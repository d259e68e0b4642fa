import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { migrateDatabase, provisionDatabase } from "@north/db";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { databaseUrl, provisionOptions, type TestPostgres } from "./pg-urls.ts";
import { type PgBouncer, startPgBouncer } from "./pgbouncer.ts";

const EMBEDDED_PROCESS = path.join(import.meta.dirname, "embedded-postgres-process.ts");

/**
 * One disposable PostgreSQL server for the whole run: embedded PostgreSQL 18 in a temporary
 * folder by default, or the server named by `DATABASE_URL`. A template database is migrated and
 * provisioned once; every suite clones it (see database.ts) and drops its clone.
 *
 * The embedded server runs in a child process, never in this one: `embedded-postgres` installs
 * an exit hook on import that would replace vitest's exit code with 0 (decision 010).
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedServer | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embedded = await startEmbeddedServer();
    serverUrl = embedded.url;
  }

  const run = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const config: TestPostgres = {
    serverUrl,
    template: `north_tpl_${run}`,
    prefix: `north_t_${run}_`,
    loginUser: process.env.DB_APP_LOGIN_USER ?? "north_app_test",
    loginPassword: process.env.DB_APP_LOGIN_PASSWORD ?? "north-test-login",
    maintenanceLoginUser: process.env.DB_MAINTENANCE_LOGIN_USER ?? "north_maintenance_test",
    maintenanceLoginPassword:
      process.env.DB_MAINTENANCE_LOGIN_PASSWORD ?? "north-test-maintenance-login",
  };
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  const teardown = async () => {
    const leftovers = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`${config.prefix}%`} or datname = ${config.template}`;
    for (const { datname } of leftovers) {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  };
  let bouncer: PgBouncer | undefined;
  const stopAll = async () => {
    await bouncer?.stop();
    await teardown().catch(() => {});
    await admin.end({ timeout: 5 });
    await embedded?.stop();
  };
  try {
    await admin.unsafe(`CREATE DATABASE ${config.template}`);
    const templateUrl = databaseUrl(serverUrl, config.template);
    await migrateDatabase(templateUrl);
    await provisionDatabase(templateUrl, provisionOptions(config));
    if (process.env.NORTH_TEST_PGBOUNCER === "1") {
      bouncer = await startPgBouncer({
        serverUrl,
        user: config.loginUser,
        password: config.loginPassword,
      });
      config.appServerUrl = bouncer.url;
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  project.provide("northPostgres", config);
  return stopAll;
}

interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts embedded-postgres-process.ts under Bun and waits for the line with its URL. */
async function startEmbeddedServer(): Promise<EmbeddedServer> {
  const child = spawn("bun", [EMBEDDED_PROCESS], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`embedded PostgreSQL exited (${code})`)));
  });
  return {
    url,
    /** Closing stdin asks the child to stop its server and remove its data. */
    async stop() {
      if (child.exitCode === null) child.stdin?.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
    },
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    northPostgres: TestPostgres;
  }
}
