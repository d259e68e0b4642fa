import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import { prepareStatement, runOnPool } from "./prepared.ts";
import { apiTokens } from "./schema/index.ts";

export const TOKEN_PREFIX = "north_";
const TOKEN_SHAPE = /^north_[A-Za-z0-9_-]{43}$/;

/** SHA-256 hex of a token: the only form in which a token is ever stored. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** `north_` + 256 random bits, base64url. */
export function mintToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export interface CreateTokenParams {
  organizationId: string;
  userId: string;
  scopes: readonly string[];
  expiresAt: Date | null;
}

export interface CreatedToken {
  id: string;
  /** Shown once; only its hash is kept. */
  token: string;
  scopes: string[];
  expiresAt: Date | null;
}

/**
 * Mints and stores a token for a member (owner connection, or a transaction on it that also
 * writes the audit row). The plaintext is returned once.
 */
export async function createApiToken(
  db: Database | Tx,
  params: CreateTokenParams,
): Promise<CreatedToken> {
  const token = mintToken();
  const [row] = await db
    .insert(apiTokens)
    .values({
      organizationId: params.organizationId,
      userId: params.userId,
      tokenHash: hashToken(token),
      scopes: [...params.scopes],
      expiresAt: params.expiresAt,
    })
    .returning({ id: apiTokens.id, scopes: apiTokens.scopes, expiresAt: apiTokens.expiresAt });
  if (!row) throw new Error("insert returned no token");
  return { id: row.id, token, scopes: row.scopes, expiresAt: row.expiresAt };
}

/** Every token of an organization, newest first, without hashes. */
export async function listApiTokens(db: Database, params: { organizationId: string }) {
  return db
    .select({
      id: apiTokens.id,
      userId: apiTokens.userId,
      scopes: apiTokens.scopes,
      createdAt: apiTokens.createdAt,
      expiresAt: apiTokens.expiresAt,
      revokedAt: apiTokens.revokedAt,
      lastUsedAt: apiTokens.lastUsedAt,
    })
    .from(apiTokens)
    .where(eq(apiTokens.organizationId, params.organizationId))
    .orderBy(desc(apiTokens.createdAt));
}

/** Whose token this is (owner connection): its organization and member, or undefined. */
export async function apiTokenHolder(db: Database | Tx, params: { id: string }) {
  const [row] = await db
    .select({ organizationId: apiTokens.organizationId, userId: apiTokens.userId })
    .from(apiTokens)
    .where(eq(apiTokens.id, params.id));
  return row;
}

/**
 * Revokes a token; `found: false` when no such token exists. Revoking twice keeps the first time
 * (`changed: false`).
 */
export async function revokeApiToken(db: Database | Tx, params: { id: string }) {
  const [revoked] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiTokens.id, params.id), isNull(apiTokens.revokedAt)))
    .returning({ revokedAt: apiTokens.revokedAt });
  if (revoked) return { found: true as const, revokedAt: revoked.revokedAt, changed: true };
  const [existing] = await db
    .select({ revokedAt: apiTokens.revokedAt })
    .from(apiTokens)
    .where(eq(apiTokens.id, params.id));
  return existing
    ? { found: true as const, revokedAt: existing.revokedAt, changed: false }
    : { found: false as const };
}

export interface ResolvedToken {
  tokenId: string;
  organizationId: string;
  userId: string;
  role: "member" | "manager";
  scopes: string[];
}

/**
 * The principal behind a presented token, or null (malformed, unknown, expired, revoked, or
 * its user no longer a member). Runs on the app login role through `resolve_api_token`.
 */
export async function resolveApiToken(db: Database, token: string): Promise<ResolvedToken | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await runOnPool(db, RESOLVE_API_TOKEN, { hash: hashToken(token) });
  return row ?? null;
}

/** The token check every request with an API token makes, built once (decision 036). */
const RESOLVE_API_TOKEN = prepareStatement<{ hash: string }, ResolvedToken>(
  ["hash"],
  (_db, p) => sql`select * from public.resolve_api_token(${p.hash})`,
  (row) => ({
    tokenId: String(row.token_id),
    organizationId: String(row.organization_id),
    userId: String(row.user_id),
    role: row.role as ResolvedToken["role"],
    scopes: row.scopes as string[],
  }),
);
