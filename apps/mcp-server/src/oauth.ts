import { createHash } from "node:crypto";
import {
  type Database,
  hashToken,
  members,
  resolveOAuthGrant,
  TOKEN_PREFIX,
  withTenant,
} from "@north/db";
import { and, eq, isNull } from "drizzle-orm";
import { createRemoteJWKSet, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { bearerToken, principalForToken } from "./auth.ts";
import type {
  AuthResolver,
  Principal,
  ResolveOptions,
  Scope,
  UnprovenCredential,
} from "./principal.ts";
import { MEMBER_SCOPES, SCOPES } from "./principal.ts";
import { createRememberedTokens } from "./remembered-tokens.ts";

/**
 * OAuth 2.1 resource-server mode (SPEC §3): bearer JWTs from an external authorization server
 * (claude.ai connectors), verified against the issuer's JWKS, with this server's resource URL
 * as audience. Claims name the organization and user; the user must be a member, and the role
 * comes from North's own members table, never from the token.
 */
/**
 * What a North access token must show besides its signature (SPEC §3, RFC 9068): this issuer,
 * this resource as audience, the `at+jwt` type (so an ID token or another JWT from the same
 * issuer is not an access token here), an expiry — jose accepts a JWT without `exp` forever
 * unless told otherwise — and an issue time that is neither in the future nor too old.
 */
const jwtChecks = (options: OAuthOptions) => ({
  issuer: options.issuer,
  audience: options.resourceUrl,
  typ: "at+jwt",
  requiredClaims: ["exp", "iat"],
  maxTokenAge: MAX_ACCESS_TOKEN_AGE,
  clockTolerance: CLOCK_TOLERANCE_S,
});

/** The access-token claim naming the grant it was issued under (decision 029). */
export const GRANT_CLAIM = "north_grant";

/** No access token older than this is accepted, whatever its `exp` says. */
export const MAX_ACCESS_TOKEN_AGE = "24h";
const CLOCK_TOLERANCE_S = 60;

export interface OAuthOptions {
  /** The authorization server (`iss`). */
  issuer: string;
  /** Where its signing keys are; default `<issuer>/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** This server's resource URL: the required audience and the RFC 9728 `resource`. */
  resourceUrl: string;
  /** Claim holding the North organization id (default `north_org`). */
  organizationClaim?: string;
  /** Claim holding the North user id (default `sub`). */
  userClaim?: string;
  /** For tests and custom key sources; by default the remote JWKS. */
  keys?: JWTVerifyGetKey;
  /**
   * North's own authorization server issued the tokens (SPEC §3a): the token's `sub` is the
   * member's user id and `client_id` names the client, and on every request the member must be
   * active and the grant (their consent to that client) still in place. Scopes are capped by
   * the member's current role, whatever the token says.
   */
  grants?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A stable uuid for a JWT (issuer + jti), so the ledger can correlate calls of one token. */
function tokenIdFor(payload: JWTPayload): string | null {
  if (typeof payload.jti !== "string" || !payload.jti) return null;
  const hex = createHash("sha256").update(`${payload.iss}|${payload.jti}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function scopesOf(payload: JWTPayload): Scope[] {
  const raw = payload.scope ?? (payload as { scp?: unknown }).scp;
  const list = typeof raw === "string" ? raw.split(" ") : Array.isArray(raw) ? raw : [];
  return list.filter((s): s is Scope => (SCOPES as readonly unknown[]).includes(s));
}

/** Verifies a JWT and maps it to a principal, or null for anything that does not hold. */
function createJwtVerifier(
  db: Database,
  options: OAuthOptions,
): (token: string, resolve?: ResolveOptions) => Promise<Principal | null> {
  const keys =
    options.keys ??
    createRemoteJWKSet(
      new URL(options.jwksUrl ?? `${options.issuer.replace(/\/$/, "")}/.well-known/jwks.json`),
    );
  const orgClaim = options.organizationClaim ?? "north_org";
  const userClaim = options.userClaim ?? "sub";
  const checks = jwtChecks(options);
  const verified = createVerifiedCache();
  // Decision 041: a tool call's transaction proves a remembered grant itself.
  const remembered = createRememberedTokens();
  return async (token, resolve) => {
    let payload = verified.get(token);
    if (!payload) {
      try {
        ({ payload } = await jwtVerify(token, keys, checks));
      } catch {
        return null;
      }
      verified.set(token, payload);
    }
    if (options.grants) {
      // Only a token whose signature and claims hold right now reaches what was remembered.
      const recalled = resolve?.mayRemember ? remembered.recall(token) : undefined;
      if (recalled) return recalled;
      const found = await principalForGrant(db, payload);
      remembered.learn(token, found);
      return found?.principal ?? null;
    }
    const organizationId = payload[orgClaim];
    const userId = payload[userClaim];
    if (typeof organizationId !== "string" || !UUID.test(organizationId)) return null;
    if (typeof userId !== "string" || !UUID.test(userId)) return null;
    const tenant = { organizationId, userId };
    const [member] = await withTenant(db, tenant, (tx) =>
      tx
        .select({ role: members.role })
        .from(members)
        .where(
          and(
            eq(members.organizationId, organizationId),
            eq(members.userId, userId),
            isNull(members.removedAt),
          ),
        ),
    );
    if (!member) return null;
    const principal: Principal = {
      organizationId,
      userId,
      role: member.role,
      scopes: scopesOf(payload),
      tokenId: tokenIdFor(payload),
    };
    return principal;
  };
}

/** Verified tokens kept at most this many, and at most this long (never past their `exp`). */
const VERIFIED_CACHE_SIZE = 10_000;
const VERIFIED_CACHE_MS = 5 * 60 * 1000;

/**
 * Claims of tokens whose signature and claims already verified, so a host's every call does not
 * pay the ES256 check again (decision 017). Only the signature work is saved: the member and
 * grant are still checked on every request, so revocation still takes effect at once. Bounded
 * (oldest out first), and an entry never outlives its token's `exp` or five minutes.
 */
function createVerifiedCache() {
  const entries = new Map<string, { payload: JWTPayload; until: number }>();
  return {
    get(token: string): JWTPayload | undefined {
      const entry = entries.get(token);
      if (!entry) return undefined;
      if (entry.until > Date.now()) return entry.payload;
      entries.delete(token);
      return undefined;
    },
    set(token: string, payload: JWTPayload) {
      const exp = typeof payload.exp === "number" ? payload.exp * 1000 : 0;
      const until = Math.min(exp, Date.now() + VERIFIED_CACHE_MS);
      if (until <= Date.now()) return;
      if (entries.size >= VERIFIED_CACHE_SIZE) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(token, { payload, until });
    },
  };
}

/**
 * A North-issued access token → its member, if the grant behind it still holds, and what a
 * remembered copy's transactions must prove (decision 041).
 */
async function principalForGrant(
  db: Database,
  payload: JWTPayload,
): Promise<{ principal: Principal; unproven: UnprovenCredential } | null> {
  const userId = payload.sub;
  const clientId = (payload as { client_id?: unknown }).client_id;
  if (typeof userId !== "string" || !UUID.test(userId)) return null;
  if (typeof clientId !== "string" || !clientId) return null;
  // The grant the token was issued under (decision 029): a token of an earlier grant — revoked,
  // then consented again — names another one, and a token without the claim names none.
  const grantId = payload[GRANT_CLAIM];
  if (typeof grantId !== "string" || !UUID.test(grantId)) return null;
  const grant = await resolveOAuthGrant(db, userId, clientId, grantId);
  if (!grant) return null;
  // Capped by the member's current role and by what opened the grant, whatever the token says.
  const allowed = (s: Scope) =>
    (s !== "admin" || grant.role === "manager") && (!grant.scopeCap || grant.scopeCap.includes(s));
  const scopes = scopesOf(payload).filter(allowed);
  return {
    principal: {
      organizationId: grant.organizationId,
      userId,
      role: grant.role,
      scopes,
      tokenId: tokenIdFor(payload),
      reauthorizable: SCOPES.filter(allowed),
    },
    unproven: { grant: { clientId, grantId, scopeCap: grant.scopeCap } },
  };
}

/**
 * The production resolver: `Authorization: Bearer north_…` API tokens, checked against the
 * hashed store on every request (so expiry and revocation take effect at once), and — when
 * OAuth is configured — JWTs from the authorization server. Anything else is unauthenticated.
 */
export function createAuthResolver(db: Database, oauth?: OAuthOptions): AuthResolver {
  const verifyJwt = oauth ? createJwtVerifier(db, oauth) : undefined;
  // Decision 036: a tool call's transaction proves a remembered API token itself.
  const remembered = createRememberedTokens();
  return async (request, options) => {
    const token = bearerToken(request);
    if (!token) return null;
    if (token.startsWith(TOKEN_PREFIX)) {
      const apiTokenHash = hashToken(token);
      const recalled = options?.mayRemember ? remembered.recall(apiTokenHash) : undefined;
      if (recalled) return recalled;
      const principal = await principalForToken(db, token);
      remembered.learn(apiTokenHash, principal && { principal, unproven: { apiTokenHash } });
      return principal;
    }
    return verifyJwt ? verifyJwt(token, options) : null;
  };
}

/**
 * RFC 9728 protected-resource metadata for this server. `scopes_supported` names the member
 * scopes only: hosts ask for everything it lists, and `admin` is reached by step-up (decision 030).
 */
export function protectedResourceMetadata(options: OAuthOptions) {
  return {
    resource: options.resourceUrl,
    authorization_servers: [options.issuer],
    scopes_supported: [...MEMBER_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "North",
  };
}
