import {
  apiTokenHolder,
  createApiToken,
  createFingerprinter,
  findMemberRole,
  listApiTokens,
  listMembers,
  migrateDatabase,
  organizationExists,
  provisionDatabase,
  purgeExpiredMemories,
  reclaimErasedSpace,
  recordAudit,
  rekeySubjectFingerprints,
  revokeApiToken,
  type TargetFingerprint,
  type VectorSearchReport,
  withOrganization,
} from "@north/db";
import { SCOPES, type Scope } from "@north/mcp-server";
import { migrationsFolder, type NorthConfig } from "./config.ts";
import { CliError, type OwnerRuntime, openOwner } from "./runtime.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_SCOPES: Scope[] = ["profile:write", "memory:read", "memory:write"];
const DEFAULT_EXPIRY = "90d";

/** A missing value is "required"; a malformed one "must be a uuid": two different mistakes. */
export function requireUuid(value: string | undefined, flag: string): string {
  if (value === undefined || value === "") throw new CliError(`${flag} is required`);
  if (!UUID.test(value)) throw new CliError(`${flag} must be a uuid`);
  return value.toLowerCase();
}

/**
 * Fingerprints the member an operator command changes, for its audit row (an operator has no
 * member identity: the row's actor is null), with NORTH_AUDIT_KEY or the local install's key.
 * With DATABASE_URL and no key the row is still written, without a target.
 */
export function operatorTarget(
  config: NorthConfig,
  runtime: OwnerRuntime,
): (userId: string) => TargetFingerprint | undefined {
  const key = config.NORTH_AUDIT_KEY ?? runtime.local?.state.auditKey;
  const fingerprint = key ? createFingerprinter(key) : undefined;
  return (userId) => fingerprint?.(userId);
}

/** The longest lifetime `token create --expires` accepts (`never` aside). */
export const MAX_TOKEN_DAYS = 365;

/** `30d`, `12h`, `15m`, `90s` → a date that far ahead, at most {@link MAX_TOKEN_DAYS}; `never` → null. */
export function parseExpiry(value: string, now = Date.now()): Date | null {
  if (value === "never") return null;
  if (value.startsWith("-")) throw new CliError("--expires cannot be negative");
  const match = /^(\d{1,9})([smhd])$/.exec(value);
  if (!match) throw new CliError("--expires must look like 30d, 12h, 15m, 90s or never");
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as "s" | "m" | "h" | "d"
  ];
  const amount = Number(match[1]);
  if (amount === 0) throw new CliError("--expires must be at least one unit");
  if (amount * unit > MAX_TOKEN_DAYS * 86_400_000) {
    throw new CliError(`--expires is at most ${MAX_TOKEN_DAYS}d (or never)`);
  }
  return new Date(now + amount * unit);
}

export async function migrate(config: NorthConfig) {
  if (!config.DATABASE_URL) {
    const runtime = await openOwner(config); // the local database is migrated as it opens
    await runtime.close();
    return { migrated: true, database: "local" };
  }
  const { vectorSearch } = await migrateDatabase(config.DATABASE_URL, migrationsFolder(config));
  return { migrated: true, database: "DATABASE_URL", vectorSearch };
}

/** `north migrate`'s line about vector search (decision 028), for a person. */
export function describeVectorSearch(report: VectorSearchReport): string {
  const extension = {
    installed: `pgvector ${report.version} found`,
    created: `pgvector ${report.version} created`,
    unavailable: "no pgvector on this server: semantic recall compares vectors without an index",
    "not-permitted":
      "pgvector is on this server but this role may not create it: a superuser runs CREATE EXTENSION vector in this database, then north migrate again",
    outdated:
      "pgvector is older than 0.8.0: ALTER EXTENSION vector UPDATE, then north migrate again",
  }[report.extension];
  const indexes = report.indexes.map((i) => `${i.model}: HNSW index ${i.outcome}`);
  return [extension, ...indexes].join("; ");
}

export async function provision(config: NorthConfig) {
  if (!config.DATABASE_URL) {
    const runtime = await openOwner(config); // and provisioned
    await runtime.close();
    return { provisioned: true, database: "local" };
  }
  await provisionDatabase(config.DATABASE_URL, {
    loginUser: config.DB_APP_LOGIN_USER,
    loginPassword: config.DB_APP_LOGIN_PASSWORD,
    maintenanceLoginUser: config.DB_MAINTENANCE_LOGIN_USER,
    maintenanceLoginPassword: config.DB_MAINTENANCE_LOGIN_PASSWORD,
  });
  return { provisioned: true, database: "DATABASE_URL", loginUser: config.DB_APP_LOGIN_USER };
}

export async function tokenCreate(
  config: NorthConfig,
  flags: { org?: string; user?: string; scope?: string[]; expires?: string },
) {
  const organizationId = requireUuid(flags.org, "--org");
  const userId = requireUuid(flags.user, "--user");
  const scopes = flags.scope?.length ? flags.scope : DEFAULT_SCOPES;
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new CliError(`unknown scope ${JSON.stringify(scope)}; scopes are ${SCOPES.join(", ")}`);
    }
  }
  const expiresAt = parseExpiry(flags.expires ?? DEFAULT_EXPIRY);
  const runtime = await openOwner(config);
  try {
    const role = await findMemberRole(runtime.owner.db, { organizationId, userId });
    if (!role) throw new CliError("that user is not a member of that organization");
    if (scopes.includes("admin") && role !== "manager") {
      throw new CliError("the admin scope is for managers only");
    }
    const target = operatorTarget(config, runtime);
    const created = await withOrganization(runtime.owner.db, organizationId, async (tx) => {
      const token = await createApiToken(tx, {
        organizationId,
        userId,
        scopes: [...new Set(scopes)],
        expiresAt,
      });
      await recordAudit(tx, {
        tool: "token_create",
        outcome: "created",
        tokenId: token.id,
        target: target(userId),
      });
      return token;
    });
    return {
      id: created.id,
      token: created.token,
      scopes: created.scopes,
      expiresAt: created.expiresAt ? new Date(created.expiresAt).toISOString() : null,
    };
  } finally {
    await runtime.close();
  }
}

/** Tokens of an organization, newest first, each with its member's email. */
export async function tokenList(config: NorthConfig, flags: { org?: string }) {
  const organizationId = requireUuid(flags.org, "--org");
  const runtime = await openOwner(config);
  try {
    const db = runtime.owner.db;
    if (!(await organizationExists(db, organizationId))) throw new CliError("no such organization");
    const emails = new Map(
      (await listMembers(db, { organizationId })).map((m) => [m.userId, m.email]),
    );
    const tokens = (await listApiTokens(db, { organizationId })).map((t) => ({
      ...t,
      email: emails.get(t.userId) ?? null,
    }));
    return { tokens };
  } finally {
    await runtime.close();
  }
}

export async function tokenRevoke(config: NorthConfig, id: string | undefined) {
  const tokenId = requireUuid(id, "token revoke ID");
  const runtime = await openOwner(config);
  try {
    const holder = await apiTokenHolder(runtime.owner.db, { id: tokenId });
    if (!holder) throw new CliError("no such token");
    const target = operatorTarget(config, runtime);
    const result = await withOrganization(runtime.owner.db, holder.organizationId, async (tx) => {
      const revoked = await revokeApiToken(tx, { id: tokenId });
      if (revoked.found) {
        await recordAudit(tx, {
          tool: "token_revoke",
          outcome: revoked.changed ? "revoked" : "noop",
          reason: "operator",
          tokenId,
          target: target(holder.userId),
        });
      }
      return revoked;
    });
    if (!result.found) throw new CliError("no such token");
    return { id: tokenId, revoked: true, revokedAt: result.revokedAt };
  } finally {
    await runtime.close();
  }
}

/** A constraint failure as an operator sentence; anything else is rethrown unchanged. */
export function translate(error: unknown, messages: Record<string, string>): unknown {
  let current: unknown = error;
  while (current && typeof current === "object") {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && messages[code]) return new CliError(messages[code]);
    current = (current as { cause?: unknown }).cause;
  }
  return error;
}

/**
 * Removes the bodies of expired memories in every organization (each purge audited), then runs
 * the disk-reclaiming steps this connection may run (`--full`: VACUUM FULL, which locks the
 * memories table while it rewrites it).
 */
export async function purge(config: NorthConfig, flags: { full?: boolean } = {}) {
  const runtime = await openOwner(config);
  try {
    const purged = await purgeExpiredMemories(runtime.owner.db);
    const reclaim = await reclaimErasedSpace(runtime.owner.client, { full: flags.full ?? false });
    return { ...purged, reclaimed: reclaim.ran, skipped: reclaim.skipped };
  } finally {
    await runtime.close();
  }
}

/**
 * Re-keys every subject fingerprint with the current canonical form and audit key (decision
 * 014): run once after upgrading to canonical subject matching, and after rotating
 * `NORTH_AUDIT_KEY`. The key is `NORTH_AUDIT_KEY`, or the local install's.
 */
export async function subjectsRekey(config: NorthConfig) {
  if (config.DATABASE_URL && !config.NORTH_AUDIT_KEY) {
    throw new CliError("NORTH_AUDIT_KEY is required with DATABASE_URL: it keys the fingerprints");
  }
  const runtime = await openOwner(config);
  try {
    const key = config.NORTH_AUDIT_KEY ?? runtime.local?.state.auditKey;
    if (!key) throw new CliError("NORTH_AUDIT_KEY is not set");
    const fingerprint = createFingerprinter(key);
    return await rekeySubjectFingerprints(runtime.owner.db, (v) => fingerprint(v).fingerprint);
  } finally {
    await runtime.close();
  }
}
