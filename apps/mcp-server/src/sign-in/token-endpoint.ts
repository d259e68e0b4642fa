import {
  activeMemberForUser,
  authorizationServerTables as ast,
  clipRefreshTokens,
  type Database,
  grantStartedAt,
  resolveOAuthGrant,
  revokeClientAccess,
  type TargetFingerprint,
} from "@north/db";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { decodeJwt } from "jose";
import { describeError, type Logger } from "../logger.ts";
import { AS_BASE_PATH } from "./authorization-server.ts";
import { revokeAndAudit, storedTokenHash } from "./grants.ts";

export interface TokenEndpointDeps {
  db: Database;
  fingerprint: (value: string) => TargetFingerprint;
  logger: Logger;
}

/** A refresh token row as the token endpoint reads it: whose, and when it was issued. */
interface IssuedToken {
  userId: string;
  clientId: string;
  createdAt: Date | null;
}

/** The member and client of the access token in a token response (North's own, just issued). */
async function issuedFor(response: Response): Promise<{ userId: string; clientId: string } | null> {
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { access_token?: unknown } | null;
  if (typeof body?.access_token !== "string") return null;
  try {
    const { sub, client_id: clientId } = decodeJwt(body.access_token) as {
      sub?: unknown;
      client_id?: unknown;
    };
    return typeof sub === "string" && typeof clientId === "string"
      ? { userId: sub, clientId }
      : null;
  } catch {
    return null;
  }
}

/** The member and client behind a presented refresh token, and whether it was already spent. */
async function refreshTokenRow(deps: TokenEndpointDeps, token: string) {
  const [row] = await deps.db
    .select({
      userId: ast.oauthRefreshToken.userId,
      clientId: ast.oauthRefreshToken.clientId,
      createdAt: ast.oauthRefreshToken.createdAt,
      revoked: ast.oauthRefreshToken.revoked,
      rotatedAt: ast.oauthRefreshToken.rotatedAt,
      replayUntil: ast.oauthRefreshToken.rotationReplayExpiresAt,
    })
    .from(ast.oauthRefreshToken)
    .where(eq(ast.oauthRefreshToken.token, storedTokenHash(token)));
  return row ?? null;
}

/**
 * Whether a refresh token (or the one a code was redeemed for) was issued under the grant now
 * in place. The library stores its tokens' times to the second, so the grant's start is too.
 */
async function ofCurrentGrant(deps: TokenEndpointDeps, row: IssuedToken): Promise<boolean> {
  const started = await grantStartedAt(deps.db, row.userId, row.clientId);
  if (!started || !row.createdAt) return false;
  return row.createdAt.getTime() >= Math.floor(started.getTime() / 1000) * 1000;
}

/**
 * Ends the grant a presented refresh token (or a replayed code's) belongs to, and records why.
 * Only the current grant's: a token issued before it started belongs to a grant that already
 * ended (a re-consent, a removal), and replaying it must not end the member's new connection.
 */
async function revokeFor(deps: TokenEndpointDeps, row: IssuedToken, reason: string): Promise<void> {
  if (!(await ofCurrentGrant(deps, row))) return;
  const member = await activeMemberForUser(deps.db, row.userId);
  if (!member) return;
  await revokeAndAudit(
    deps.db,
    { organizationId: member.organizationId, userId: row.userId, clientId: row.clientId },
    reason,
    deps.fingerprint,
  ).catch((error) => deps.logger.error(describeError(error), "grant revocation failed"));
}

/**
 * After tokens were issued: the grant's refresh tokens end no later than the grant (the
 * library gives each one a fresh 30 days). The member and client come from the refresh
 * token presented, or from the access token just issued for a code.
 */
async function clipToGrant(
  deps: TokenEndpointDeps,
  response: Response,
  row: { userId: string; clientId: string } | null,
) {
  const grant = row ?? (await issuedFor(response));
  if (grant) await clipRefreshTokens(deps.db, grant.userId, grant.clientId);
}

/**
 * The grant of an authorization code already redeemed: the library keeps no record of a spent
 * code, but every refresh token of its grant carries the code's id (its stored hash), rotations
 * included.
 */
async function redeemedCodeRow(deps: TokenEndpointDeps, code: string): Promise<IssuedToken | null> {
  const [row] = await deps.db
    .select({
      userId: ast.oauthRefreshToken.userId,
      clientId: ast.oauthRefreshToken.clientId,
      createdAt: ast.oauthRefreshToken.createdAt,
    })
    .from(ast.oauthRefreshToken)
    .where(eq(ast.oauthRefreshToken.authorizationCodeId, storedTokenHash(code)))
    .limit(1);
  return row ?? null;
}

/** The 400 of a refresh or code whose grant has ended. */
const GRANT_ENDED = {
  error: "invalid_grant",
  error_description: "This connection has ended: sign in again.",
} as const;

/**
 * The token and revocation endpoints, around the library's (decision 029): what a grant's
 * records say decides whether a refresh may rotate, a replay ends the grant it belongs to (only
 * the current one), and every issued refresh token ends with its grant. `forward` hands a
 * request to the library.
 */
export function buildTokenRoutes(
  deps: TokenEndpointDeps,
  forward: (request: Request) => Response | Promise<Response>,
) {
  const app = new Hono<{ Variables: { requestId: string } }>();

  // Clients authenticate by secret or not at all: a client assertion (private_key_jwt) is refused,
  // whatever the client's registration or metadata document says.
  for (const endpoint of ["token", "revoke"]) {
    app.use(`${AS_BASE_PATH}/oauth2/${endpoint}`, async (c, next) => {
      const form = await c.req.raw
        .clone()
        .formData()
        .catch(() => null);
      // RFC 6749 §3.1: no parameter twice. North's checks read a parameter's first value and
      // the library's parser its last, so a repeated one could pass one and reach the other.
      const names = form ? [...form.keys()] : [];
      if (new Set(names).size !== names.length) {
        const error_description = "a request parameter appears more than once";
        return c.json({ error: "invalid_request", error_description }, 400);
      }
      if (form?.has("client_assertion") || form?.has("client_assertion_type")) {
        const error_description = "client assertions (private_key_jwt) are not supported";
        return c.json({ error: "invalid_client", error_description }, 401);
      }
      return next();
    });
  }

  // Token endpoint: a spent refresh token presented after the grace window, or an authorization
  // code presented again, revokes the whole grant (the library revokes the refresh family; North
  // also drops the consent the resource server checks, and records it).
  app.post(`${AS_BASE_PATH}/oauth2/token`, async (c) => {
    const form = await c.req.raw
      .clone()
      .formData()
      .catch(() => null);
    const refresh = form?.get("grant_type") === "refresh_token" ? form.get("refresh_token") : null;
    const row = typeof refresh === "string" ? await refreshTokenRow(deps, refresh) : null;
    // A code already redeemed, read before the library answers, for it deletes those tokens
    // when it refuses the replay.
    const code = form?.get("grant_type") === "authorization_code" ? form.get("code") : null;
    const redeemed = typeof code === "string" ? await redeemedCodeRow(deps, code) : null;
    // A refresh of a grant that has ended — member removed, 30 days since consent, its API
    // token revoked or expired — is refused before the library can rotate it (decision 029).
    if (
      row &&
      !row.revoked &&
      !(await resolveOAuthGrant(deps.db, row.userId, row.clientId, null))
    ) {
      await revokeClientAccess(deps.db, row.userId, row.clientId);
      deps.logger.info({ reason: "grant_ended" }, "refresh refused");
      return c.json(GRANT_ENDED, 400, { "Cache-Control": "no-store" });
    }
    // A refresh token or code of a grant that already ended (a re-consent, a removal) is refused
    // here: the library would take it for reuse and revoke the member's current refresh tokens.
    const spent = row?.revoked ? row : redeemed;
    if (spent && !(await ofCurrentGrant(deps, spent))) {
      deps.logger.info({ reason: "earlier_grant" }, "token request refused");
      return c.json(GRANT_ENDED, 400, { "Cache-Control": "no-store" });
    }
    const response = await forward(c.req.raw);
    // RFC 6749 §4.1.2: a code used twice revokes what it issued — the grant, whose access
    // tokens (JWTs the library cannot recall) the resource server then refuses.
    if (redeemed && response.status === 400) await revokeFor(deps, redeemed, "code_reuse");
    if (row?.revoked && response.status === 400) {
      const withinGrace = row.replayUntil !== null && row.replayUntil > new Date();
      if (!withinGrace) await revokeFor(deps, row, "refresh_reuse");
    }
    if (response.ok) await clipToGrant(deps, response, row);
    return response;
  });

  // RFC 7009: a client that revokes its refresh token ends its grant.
  app.post(`${AS_BASE_PATH}/oauth2/revoke`, async (c) => {
    const form = await c.req.raw
      .clone()
      .formData()
      .catch(() => null);
    const token = form?.get("token");
    const row = typeof token === "string" ? await refreshTokenRow(deps, token) : null;
    const response = await forward(c.req.raw);
    if (row && response.ok) await revokeFor(deps, row, "client");
    return response;
  });

  return app;
}
