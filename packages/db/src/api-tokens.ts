import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Database, Tx } from "./client.ts";
import { definerFunction } from "./definer.ts";
import { CREDENTIAL_REFUSED_SQLSTATE } from "./pg-errors.ts";
import { prepareStatement, runOnPool } from "./prepared.ts";
import { apiTokens } from "./schema/index.ts";
import { TENANT_ORGANIZATION_SETTING, TENANT_USER_SETTING } from "./schema/tenant-settings.ts";

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

export const RESOLVE_TOKEN_FUNCTION = "resolve_api_token";

/**
 * The principal behind an API token hash, if the token is neither expired nor revoked and its
 * user is still a member. SECURITY DEFINER owned by `forma`: the app role has no privilege on
 * `api_tokens`, so this is its only way in, and it can only look up a hash it already holds.
 * `last_used_at` is written at most once a minute per token, so busy tokens do not turn every
 * request into a write.
 */
export const resolveTokenDefiner = definerFunction({
  name: RESOLVE_TOKEN_FUNCTION,
  params: "p_token_hash text",
  returns: "TABLE (token_id uuid, organization_id uuid, user_id uuid, role text, scopes text[])",
  volatility: "VOLATILE",
  body: `BEGIN
  RETURN QUERY
    WITH found AS (
      SELECT t.id, t.organization_id, t.user_id, t.scopes, t.last_used_at
      FROM public.api_tokens t
      WHERE t.token_hash = p_token_hash
        AND t.revoked_at IS NULL
        AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now())
    ), touched AS (
      UPDATE public.api_tokens t SET last_used_at = pg_catalog.now()
      FROM found f
      WHERE t.id = f.id
        AND (f.last_used_at IS NULL OR f.last_used_at < pg_catalog.now() - interval '1 minute')
    )
    SELECT f.id, f.organization_id, f.user_id, m.role, f.scopes
    FROM found f
    JOIN public.members m ON m.organization_id = f.organization_id AND m.user_id = f.user_id
    WHERE m.removed_at IS NULL;
END`,
});

/**
 * The end of a credential proof (`enter_as_api_token`, `enter_as_oauth_grant`): after a
 * `PERFORM` that found the credential as remembered, the tenant of `p_organization_id` and
 * `p_user_id` is set; had it found nothing, {@link CREDENTIAL_REFUSED_SQLSTATE} aborts the
 * transaction before any statement of the work runs.
 */
export const ENTER_IF_FOUND = `  IF NOT FOUND THEN
    RAISE EXCEPTION 'the credential no longer holds' USING ERRCODE = '${CREDENTIAL_REFUSED_SQLSTATE}';
  END IF;
  PERFORM pg_catalog.set_config('${TENANT_ORGANIZATION_SETTING}', p_organization_id::text, true),
          pg_catalog.set_config('${TENANT_USER_SETTING}', p_user_id::text, true);`;

export const ENTER_AS_API_TOKEN_FUNCTION = "enter_as_api_token";

/**
 * Opens a tool call's transaction for a principal North remembered instead of looking up
 * (decision 036): proves, in the same transaction as the call's work, that the token still
 * resolves — by {@link RESOLVE_TOKEN_FUNCTION} itself, so expiry, revocation and membership are
 * the same rule — to exactly this token, organisation, user, role and set of scopes (`p_scopes`:
 * joined by spaces, in any order), then sets the tenant.
 * Anything else raises {@link CREDENTIAL_REFUSED_SQLSTATE}: the transaction is aborted before any
 * statement of the work runs, and no tenant is ever set from a credential that no longer holds.
 */
export const enterAsApiTokenDefiner = definerFunction({
  name: ENTER_AS_API_TOKEN_FUNCTION,
  params:
    "p_token_hash text, p_token_id uuid, p_organization_id uuid, p_user_id uuid, p_role text, p_scopes text",
  returns: "void",
  volatility: "VOLATILE",
  body: `BEGIN
  PERFORM 1 FROM public.${RESOLVE_TOKEN_FUNCTION}(p_token_hash) r
  WHERE r.token_id = p_token_id
    AND r.organization_id = p_organization_id
    AND r.user_id = p_user_id
    AND r.role = p_role
    AND r.scopes @> pg_catalog.string_to_array(p_scopes, ' ')
    AND r.scopes <@ pg_catalog.string_to_array(p_scopes, ' ');
${ENTER_IF_FOUND}
END`,
});
