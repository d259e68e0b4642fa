import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import {
  addMember,
  createApiToken,
  createOrganization,
  type Database,
  freePort,
  MAINTENANCE_LOGIN_DEFAULT,
  migrateDatabase,
  provisionDatabase,
} from "@north/db";
import { startLocalPostgres, stopLocalPostgres } from "@north/db/embedded";
import { principalForToken, SCOPES } from "@north/mcp-server";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import {
  dropLease,
  otherLeaseHolders,
  runningPostmaster,
  takeLease,
  withLifecycleLock,
} from "./local-owner.ts";

/**
 * The local install under `.north/` (or `NORTH_HOME`): an embedded PostgreSQL in `pg/`, the
 * secrets it needs in `local.json`, and the local token in `token`. Both files are mode 0600;
 * the folder is gitignored and survives restarts.
 */
export interface LocalState {
  port: number;
  superuserPassword: string;
  appLoginPassword: string;
  auditKey: string;
  /**
   * The embedded install's NORTH_SECRET_KEY: encrypts IdP client secrets and the authorization
   * server's signing keys. Added with sign-in; an older `.north/` gets one on first load.
   */
  secretKey: string;
  /** The maintenance login's password (decision 031); an older `.north/` gets one on first load. */
  maintenanceLoginPassword: string;
  organizationId?: string;
  userId?: string;
}

export const LOCAL_LOGIN_USER = "north_app";

export function northHome(configured: string | undefined): string {
  return path.resolve(configured ?? ".north");
}

const statePath = (home: string) => path.join(home, "local.json");
export const tokenPath = (home: string) => path.join(home, "token");

async function writePrivate(file: string, content: string): Promise<void> {
  await writeFile(file, content, { mode: 0o600 });
  await chmod(file, 0o600);
}

/** Reads the local state, creating it (with fresh secrets) on first use. */
export async function loadLocalState(home: string): Promise<LocalState> {
  await mkdir(home, { recursive: true });
  if (existsSync(statePath(home))) {
    const state = JSON.parse(await readFile(statePath(home), "utf8")) as LocalState;
    if (!state.secretKey || !state.maintenanceLoginPassword) {
      state.secretKey ||= randomBytes(32).toString("base64url");
      state.maintenanceLoginPassword ||= randomBytes(18).toString("base64url");
      await saveLocalState(home, state);
    }
    return state;
  }
  const state: LocalState = {
    port: await freePort(),
    superuserPassword: randomBytes(18).toString("base64url"),
    appLoginPassword: randomBytes(18).toString("base64url"),
    auditKey: randomBytes(32).toString("hex"),
    secretKey: randomBytes(32).toString("base64url"),
    maintenanceLoginPassword: randomBytes(18).toString("base64url"),
  };
  await saveLocalState(home, state);
  return state;
}

export async function saveLocalState(home: string, state: LocalState): Promise<void> {
  await writePrivate(statePath(home), `${JSON.stringify(state, null, 2)}\n`);
}

export interface LocalDatabase {
  ownerUrl: string;
  appUrl: string;
  /** The maintenance login: the backfill, the purge and the vector-index request (decision 031). */
  maintenanceUrl: string;
  /** Lets go of the database: stops PostgreSQL unless another live North process uses it. */
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}

/**
 * The local database, started if no North process has it running, then migrated and
 * provisioned (both idempotent, both take locks). This process holds a lease on it until
 * `stop()`, which stops PostgreSQL only if no other live North process holds one (decision 024).
 * A PostgreSQL found running with no live lease was left behind by a process that is gone: it is
 * adopted, with a warning on stderr, and stopped when this process lets go.
 */
export async function openLocalDatabase(
  home: string,
  state: LocalState,
  options: { migrationsFolder?: string; warn?: (line: string) => void } = {},
): Promise<LocalDatabase> {
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const url = (user: string, password: string, port: number) =>
    `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const dataDir = path.join(home, "pg");
  await withLifecycleLock(home, async () => {
    const others = await otherLeaseHolders(home);
    const postmaster = await runningPostmaster(home);
    await takeLease(home);
    try {
      if (postmaster === undefined) {
        if (!(await portIsFree(state.port))) {
          state.port = await freePort();
          await saveLocalState(home, state);
        }
        await startLocalPostgres({ dataDir, port: state.port, password: state.superuserPassword });
      } else {
        if (!(await answers(url("postgres", state.superuserPassword, state.port)))) {
          throw new Error(
            `the PostgreSQL running under ${dataDir} (pid ${postmaster}) does not answer on port ${state.port}; stop it (kill ${postmaster}) and start again`,
          );
        }
        if (others.length === 0) {
          warn(
            `north: PostgreSQL (pid ${postmaster}) was left running under ${dataDir} by a North process that is gone; using it, and stopping it when this process stops`,
          );
        }
      }
    } catch (error) {
      await dropLease(home);
      throw error;
    }
  });
  const stop = () =>
    withLifecycleLock(home, async () => {
      await dropLease(home);
      if ((await otherLeaseHolders(home)).length > 0) return;
      await stopLocalPostgres(dataDir);
    });
  const ownerUrl = url("postgres", state.superuserPassword, state.port);
  try {
    await migrateDatabase(ownerUrl, options.migrationsFolder);
    await provisionDatabase(ownerUrl, {
      loginUser: LOCAL_LOGIN_USER,
      loginPassword: state.appLoginPassword,
      maintenanceLoginUser: MAINTENANCE_LOGIN_DEFAULT,
      maintenanceLoginPassword: state.maintenanceLoginPassword,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ownerUrl,
    appUrl: url(LOCAL_LOGIN_USER, state.appLoginPassword, state.port),
    maintenanceUrl: url(MAINTENANCE_LOGIN_DEFAULT, state.maintenanceLoginPassword, state.port),
    stop,
  };
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export interface LocalWorkspace {
  organizationId: string;
  userId: string;
  token: string;
  /** True when this run minted the token (first start, or the old one stopped working). */
  minted: boolean;
}

/**
 * Makes sure the local organization, its manager and a token exist; a second start reuses them.
 * The token lives in `<home>/token` (0600): that file is how it is shown again later.
 */
export async function ensureLocalWorkspace(
  home: string,
  state: LocalState,
  owner: Database,
  app: Database,
): Promise<LocalWorkspace> {
  const known =
    state.organizationId && state.userId
      ? await owner.execute(
          sql`select 1 from members where organization_id = ${state.organizationId} and user_id = ${state.userId}`,
        )
      : [];
  if (known.length === 0) {
    const org = await createOrganization(owner, { name: "Local workspace" });
    const member = await addMember(owner, {
      organizationId: org.id,
      email: "you@north.localhost",
      role: "manager",
    });
    state.organizationId = org.id;
    state.userId = member.userId;
    await saveLocalState(home, state);
  }
  const organizationId = state.organizationId as string;
  const userId = state.userId as string;
  if (existsSync(tokenPath(home))) {
    const token = (await readFile(tokenPath(home), "utf8")).trim();
    const principal = await principalForToken(app, token);
    if (principal && principal.userId === userId) {
      return { organizationId, userId, token, minted: false };
    }
  }
  const created = await createApiToken(owner, {
    organizationId,
    userId,
    scopes: SCOPES,
    expiresAt: null,
  });
  await writePrivate(tokenPath(home), `${created.token}\n`);
  return { organizationId, userId, token: created.token, minted: true };
}

/** The repository root (where `dist/north.mjs` is built), found from this module. */
export function repositoryRoot(): string {
  let dir = path.dirname(new URL(import.meta.url).pathname);
  for (;;) {
    if (existsSync(path.join(dir, "bun.lock"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}
