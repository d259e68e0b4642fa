import { connectDatabase, type DatabaseHandle, PURGE_FUNCTION } from "@north/db";
import { migrationsFolder, type NorthConfig } from "./config.ts";
import {
  type LocalDatabase,
  type LocalState,
  loadLocalState,
  northHome,
  openLocalDatabase,
} from "./local.ts";

/** A one-line operator error: printed to stderr, exit code 1, no stack. */
export class CliError extends Error {
  override name = "CliError";
}

export interface OwnerRuntime {
  owner: DatabaseHandle;
  local?: { home: string; state: LocalState; database: LocalDatabase };
  close(): Promise<void>;
}

/**
 * The owner connection for operator commands: `DATABASE_URL`, or, when it is unset, the local
 * embedded database under `.north/` (started for the command if `bun run start` is not running).
 */
export async function openOwner(config: NorthConfig): Promise<OwnerRuntime> {
  if (config.DATABASE_URL) {
    const owner = connectDatabase(config.DATABASE_URL, { max: 2, applicationName: "north-cli" });
    return { owner, close: () => owner.close() };
  }
  const home = northHome(config.NORTH_HOME);
  const state = await loadLocalState(home);
  const database = await openLocalDatabase(home, state, {
    migrationsFolder: migrationsFolder(config),
  });
  const owner = connectDatabase(database.ownerUrl, { max: 2, applicationName: "north-cli" });
  return {
    owner,
    local: { home, state, database },
    async close() {
      await owner.close();
      await database.stop();
    },
  };
}

export interface AppRuntime {
  app: DatabaseHandle;
  /**
   * The maintenance login's small pool (decision 031), for the embeddings backfill, the periodic
   * purge and the vector-index request, never for a request: `DATABASE_MAINTENANCE_URL`, or the
   * embedded install's own. Absent when production sets no maintenance URL.
   */
  maintenance?: DatabaseHandle;
  auditKey: string;
  /**
   * NORTH_SECRET_KEY, or the embedded install's own. Absent only for `serve --stdio` against an
   * operator's database, which runs no sign-in and so needs no key (a lawyer's desktop extension
   * is never given the firm's secret key).
   */
  secretKey?: string;
  local?: { home: string; state: LocalState; database: LocalDatabase };
  close(): Promise<void>;
}

/**
 * The app-role connection for `serve`: `DATABASE_APP_URL` with `NORTH_AUDIT_KEY`, or the local
 * embedded database and the key kept in `.north/local.json`; beside it the maintenance login's
 * pool (`DATABASE_MAINTENANCE_URL`, or the embedded database's maintenance login).
 * `NORTH_SECRET_KEY` is required with `DATABASE_APP_URL` unless `signIn` is false (stdio).
 */
export async function openApp(
  config: NorthConfig,
  options: { signIn: boolean } = { signIn: true },
): Promise<AppRuntime> {
  if (config.DATABASE_APP_URL) {
    if (!config.NORTH_AUDIT_KEY) {
      throw new CliError(
        "NORTH_AUDIT_KEY is not set: serve needs it (at least 16 characters) with DATABASE_APP_URL",
      );
    }
    if (options.signIn && !config.NORTH_SECRET_KEY) {
      throw new CliError(
        "NORTH_SECRET_KEY is not set: serve needs it (at least 32 characters) with DATABASE_APP_URL",
      );
    }
    const app = connectDatabase(config.DATABASE_APP_URL, appPoolOptions(config));
    await refuseUnsafeRole(app);
    const maintenance = config.DATABASE_MAINTENANCE_URL
      ? connectDatabase(config.DATABASE_MAINTENANCE_URL, maintenancePoolOptions(config))
      : undefined;
    if (maintenance) await refuseUnfitMaintenanceRole(maintenance, app);
    return {
      app,
      maintenance,
      auditKey: config.NORTH_AUDIT_KEY,
      secretKey: config.NORTH_SECRET_KEY,
      async close() {
        await Promise.all([app.close(), maintenance?.close()]);
      },
    };
  }
  if (config.DATABASE_URL) {
    throw new CliError(
      "DATABASE_APP_URL is not set: serve connects as the app login role, never as the owner",
    );
  }
  const home = northHome(config.NORTH_HOME);
  const state = await loadLocalState(home);
  const database = await openLocalDatabase(home, state, {
    migrationsFolder: migrationsFolder(config),
  });
  const app = connectDatabase(database.appUrl, appPoolOptions(config));
  await refuseUnsafeRole(app).catch(async (error) => {
    await database.stop();
    throw error;
  });
  const maintenance = connectDatabase(database.maintenanceUrl, maintenancePoolOptions(config));
  return {
    app,
    maintenance,
    auditKey: config.NORTH_AUDIT_KEY ?? state.auditKey,
    secretKey: config.NORTH_SECRET_KEY ?? state.secretKey,
    local: { home, state, database },
    async close() {
      await Promise.all([app.close(), maintenance.close()]);
      await database.stop();
    },
  };
}

function appPoolOptions(config: NorthConfig) {
  return {
    max: config.NORTH_DB_POOL_MAX,
    statementTimeoutMs: config.NORTH_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.NORTH_DB_CONNECT_TIMEOUT_MS,
    applicationName: "north",
    transactionPooler: config.NORTH_DB_POOLER === "transaction",
  };
}

/** The maintenance pool: two connections at most, for background jobs that run one at a time. */
function maintenancePoolOptions(config: NorthConfig) {
  return { ...appPoolOptions(config), max: 2, applicationName: "north-maintenance" };
}

/**
 * A `DATABASE_MAINTENANCE_URL` whose role may not run the maintenance functions (provisioning
 * named another maintenance login, or was not re-run since decision 031) would only log a
 * failure every round: `serve` refuses to start instead, naming the fix.
 */
async function refuseUnfitMaintenanceRole(
  maintenance: DatabaseHandle,
  app: DatabaseHandle,
): Promise<void> {
  const [role] = await maintenance.client<{ name: string; may: boolean }[]>`
    select current_user as name,
           pg_catalog.has_function_privilege(${`public.${PURGE_FUNCTION}()`}, 'EXECUTE') as may`;
  if (role?.may) return;
  await Promise.all([maintenance.close(), app.close()]);
  throw new CliError(
    `refusing to serve: the maintenance role ${role?.name ?? ""} may not run the maintenance functions; run north provision with DB_MAINTENANCE_LOGIN_USER naming it (DATABASE_MAINTENANCE_URL)`,
  );
}

/**
 * SPEC §10: the runtime role must be subject to row-level security. A superuser or a BYPASSRLS
 * role skips every policy, and a table's owner skips its non-forced policies, so `serve` refuses
 * to start on any of them — one line, non-zero exit — instead of silently serving every tenant's
 * rows to every other.
 */
async function refuseUnsafeRole(app: DatabaseHandle): Promise<void> {
  const [role] = await app.client<
    { name: string; superuser: boolean; bypassrls: boolean; owned: number }[]
  >`
    select r.rolname as name, r.rolsuper as superuser, r.rolbypassrls as bypassrls,
           (select count(*)::int from pg_catalog.pg_class c
              join pg_catalog.pg_namespace n on n.oid = c.relnamespace
            where c.relowner = r.oid
              and n.nspname not in ('pg_catalog', 'information_schema')
              and n.nspname not like 'pg_toast%') as owned
    from pg_catalog.pg_roles r where r.rolname = current_user`;
  const problem = !role
    ? "cannot read its own role"
    : role.superuser
      ? "is a superuser"
      : role.bypassrls
        ? "has BYPASSRLS"
        : role.owned > 0
          ? `owns ${role.owned} relations`
          : undefined;
  if (problem) {
    await app.close();
    throw new CliError(
      `refusing to serve: the runtime role ${role?.name ?? ""} ${problem}, so row-level security would not hold; use the app login role (DATABASE_APP_URL)`,
    );
  }
}
