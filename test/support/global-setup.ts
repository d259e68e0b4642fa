import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type EmbeddedPostgresHandle,
  migrateDatabase,
  provisionDatabase,
  startEmbeddedPostgres,
} from "@north/db";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { databaseUrl, type TestPostgres } from "./pg-urls.ts";

/**
 * One disposable PostgreSQL server for the whole run: embedded PostgreSQL 18 in a temporary
 * folder by default, or the server named by `DATABASE_URL`. A template database is migrated and
 * provisioned once; every suite clones it (see database.ts) and drops its clone.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedPostgresHandle | undefined;
  let scratch: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    scratch = await mkdtemp(path.join(tmpdir(), "north-test-pg-"));
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(scratch, "data"),
      password: randomBytes(12).toString("hex"),
      persistent: false,
    });
    serverUrl = embedded.url("postgres");
  }

  const run = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const config: TestPostgres = {
    serverUrl,
    template: `north_tpl_${run}`,
    prefix: `north_t_${run}_`,
    loginUser: process.env.DB_APP_LOGIN_USER ?? "north_app_test",
    loginPassword: process.env.DB_APP_LOGIN_PASSWORD ?? "north-test-login",
  };
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${config.template}`);
  const templateUrl = databaseUrl(serverUrl, config.template);
  await migrateDatabase(templateUrl);
  await provisionDatabase(templateUrl, {
    loginUser: config.loginUser,
    loginPassword: config.loginPassword,
  });
  project.provide("northPostgres", config);

  return async () => {
    const leftovers = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`${config.prefix}%`} or datname = ${config.template}`;
    for (const { datname } of leftovers) {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    await admin.end({ timeout: 5 });
    await embedded?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    northPostgres: TestPostgres;
  }
}
