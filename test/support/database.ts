import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  connectDatabase,
  type DatabaseHandle,
  MIGRATIONS_FOLDER,
  migrateDatabase,
  provisionDatabase,
} from "@north/db";
import postgres from "postgres";
import { inject } from "vitest";
import { databaseUrl, loginUrl, provisionOptions } from "./pg-urls.ts";

export interface TestDatabase {
  name: string;
  /** Superuser / migrator URL (what `DATABASE_URL` is in production). */
  ownerUrl: string;
  /**
   * The app login role (what `DATABASE_APP_URL` is in production): through PgBouncer in
   * transaction mode when the run has one (`pooler`), else straight to PostgreSQL.
   */
  appUrl: string;
  /** The app login role straight to PostgreSQL, for a check that needs one server connection. */
  directAppUrl: string;
  /**
   * The maintenance login role (what `DATABASE_MAINTENANCE_URL` is in production): the
   * embeddings backfill, the periodic purge and the vector-index request run on it.
   */
  maintenanceUrl: string;
  /** `transaction` when `appUrl` leads to PgBouncer: what `NORTH_DB_POOLER` must say. */
  pooler: "none" | "transaction";
  owner: DatabaseHandle;
  app: DatabaseHandle;
  /** A pool on `maintenanceUrl`. */
  maintenance: DatabaseHandle;
  loginUser: string;
  maintenanceLoginUser: string;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** `template` (default): a migrated, provisioned clone. `empty`: a bare database. */
  from?: "template" | "empty";
}

/** A fresh database for one suite, cloned from the run's migrated template so it stays fast. */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const config = inject("northPostgres");
  const name = `${config.prefix}${randomBytes(4).toString("hex")}`;
  const admin = postgres(config.serverUrl, { max: 1, onnotice: () => {} });
  try {
    const clause = options.from === "empty" ? "" : ` TEMPLATE ${config.template}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(`CREATE DATABASE ${name}${clause}`);
        break;
      } catch (error) {
        // 55006: the template is briefly in use by another clone; try again.
        if ((error as { code?: string }).code !== "55006" || attempt > 20) throw error;
        await new Promise((r) => setTimeout(r, 100 + attempt * 50));
      }
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
  const ownerUrl = databaseUrl(config.serverUrl, name);
  const directAppUrl = loginUrl(ownerUrl, config.loginUser, config.loginPassword);
  const appUrl = config.appServerUrl
    ? loginUrl(databaseUrl(config.appServerUrl, name), config.loginUser, config.loginPassword)
    : directAppUrl;
  const pooler = config.appServerUrl ? "transaction" : "none";
  const maintenanceUrl = loginUrl(
    ownerUrl,
    config.maintenanceLoginUser,
    config.maintenanceLoginPassword,
  );
  const owner = connectDatabase(ownerUrl, { max: 4, applicationName: "north-test-owner" });
  const app = connectDatabase(appUrl, {
    max: 12,
    applicationName: "north-test-app",
    transactionPooler: pooler === "transaction",
  });
  const maintenance = connectDatabase(maintenanceUrl, {
    max: 2,
    applicationName: "north-test-maintenance",
  });
  return {
    name,
    ownerUrl,
    appUrl,
    directAppUrl,
    maintenanceUrl,
    pooler,
    owner,
    app,
    maintenance,
    loginUser: config.loginUser,
    maintenanceLoginUser: config.maintenanceLoginUser,
    async drop() {
      await Promise.all([owner.close(), app.close(), maintenance.close()]);
      const drop = postgres(config.serverUrl, { max: 1, onnotice: () => {} });
      await drop.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end({ timeout: 5 });
    },
  };
}

/** Migrate + provision a bare database, as an operator would on a fresh install. */
export async function installFresh(db: TestDatabase): Promise<void> {
  const config = inject("northPostgres");
  await migrateDatabase(db.ownerUrl);
  await provisionDatabase(db.ownerUrl, provisionOptions(config));
}

/**
 * Migrates `db` with the committed migrations that come before the one tagged `tag`: an older
 * release's schema, for upgrade tests.
 */
export async function migrateBefore(db: TestDatabase, tag: string): Promise<void> {
  const scratch = await mkdtemp(path.join(tmpdir(), "north-old-migrations-"));
  try {
    await cp(MIGRATIONS_FOLDER, scratch, { recursive: true });
    const journalPath = path.join(scratch, "meta/_journal.json");
    const journal = JSON.parse(await readFile(journalPath, "utf8"));
    const cut = journal.entries.findIndex((e: { tag: string }) => e.tag.includes(tag));
    if (cut < 0) throw new Error(`no migration tagged ${tag}`);
    journal.entries = journal.entries.slice(0, cut);
    await writeFile(journalPath, JSON.stringify(journal));
    await migrateDatabase(db.ownerUrl, scratch);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
