import { authorizationServerTables as ast, type Database } from "@north/db";
import { and, eq, inArray, lt, notExists } from "drizzle-orm";
import { z } from "zod";

/** Longest URI a registration may store (each redirect URI, client_uri, logo_uri…). */
export const MAX_URI_LENGTH = 1024;
/** Most redirect URIs one client may register. */
export const MAX_REDIRECT_URIS = 10;
/** A client that never received a consent is deleted once this old (a day). */
export const UNCONSENTED_CLIENT_TTL_S = 24 * 3600;
/** Most clients one sweep deletes: a sweep runs with each registration, so it stays cheap. */
export const SWEEP_BATCH = 100;

const uri = z.string().max(MAX_URI_LENGTH);
const uris = z.array(uri).max(MAX_REDIRECT_URIS);
const short = (max: number) => z.string().max(max);

/**
 * What North lets one registration store (RFC 7591 fields; the library drops any other). The
 * library checks types and meaning; this schema only caps sizes, so an unauthenticated
 * registration stores a few kilobytes at most instead of the whole 64 KiB body.
 */
const registrationCaps = z
  .looseObject({
    redirect_uris: uris.describe("each redirect URI, and how many"),
    post_logout_redirect_uris: uris.describe("each post-logout redirect URI, and how many"),
    client_name: short(200).describe("the name the consent page shows"),
    client_uri: uri.describe("the client's home page"),
    logo_uri: uri.describe("the client's logo"),
    tos_uri: uri.describe("the client's terms of service"),
    policy_uri: uri.describe("the client's privacy policy"),
    jwks_uri: uri.describe("where the client's keys are published"),
    backchannel_logout_uri: uri.describe("the client's logout endpoint"),
    contacts: z.array(short(320)).max(5).describe("contact emails"),
    software_id: short(200).describe("the client software's id"),
    software_version: short(64).describe("the client software's version"),
    software_statement: short(4096).describe("a signed software statement"),
    scope: short(512).describe("the scopes asked for"),
    grant_types: z.array(short(64)).max(5).describe("grant types"),
    response_types: z.array(short(64)).max(5).describe("response types"),
    resources: z.array(uri).max(5).describe("resources"),
    jwks: z
      .unknown()
      .refine((value) => JSON.stringify(value ?? null).length <= 8192, "at most 8192 characters")
      .describe("the client's keys, inline"),
  })
  .partial();

const REDIRECT_FIELDS = new Set(["redirect_uris", "post_logout_redirect_uris"]);

/**
 * The RFC 7591 error for a registration over North's caps, naming the field (and which entry of
 * a list), or null when every field fits.
 */
export function registrationOverCaps(
  body: Record<string, unknown>,
): { error: "invalid_client_metadata" | "invalid_redirect_uri"; error_description: string } | null {
  const result = registrationCaps.safeParse(body);
  if (result.success) return null;
  const issue = result.error.issues[0];
  const [field, ...rest] = issue?.path ?? [];
  const name = `${String(field)}${rest.map((part) => `[${String(part)}]`).join("")}`;
  return {
    error: REDIRECT_FIELDS.has(String(field)) ? "invalid_redirect_uri" : "invalid_client_metadata",
    error_description: `${name}: ${issue?.message ?? "too large"}`,
  };
}

/**
 * Deletes up to {@link SWEEP_BATCH} clients registered more than a day ago that never received a
 * consent and hold no token (SPEC §3a: registration cannot fill the database). Rows a consent
 * being written right now has locked are skipped (`SKIP LOCKED`), so a sweep never races a
 * consent into a cascade. Returns how many were deleted.
 */
export async function sweepUnconsentedClients(db: Database, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - UNCONSENTED_CLIENT_TTL_S * 1000);
  const client = ast.oauthClient;
  const unused = db
    .select({ id: client.id })
    .from(client)
    .where(
      and(
        lt(client.createdAt, cutoff),
        notExists(
          db.select().from(ast.oauthConsent).where(eq(ast.oauthConsent.clientId, client.clientId)),
        ),
        notExists(
          db
            .select()
            .from(ast.oauthRefreshToken)
            .where(eq(ast.oauthRefreshToken.clientId, client.clientId)),
        ),
        notExists(
          db
            .select()
            .from(ast.oauthAccessToken)
            .where(eq(ast.oauthAccessToken.clientId, client.clientId)),
        ),
      ),
    )
    .limit(SWEEP_BATCH)
    .for("update", { skipLocked: true });
  const deleted = await db
    .delete(client)
    .where(inArray(client.id, unused))
    .returning({ id: client.id });
  return deleted.length;
}
