import { randomUUID } from "node:crypto";
import { cimd } from "@better-auth/cimd";
import { drizzleAdapter } from "@better-auth/drizzle-adapter";
import { mcp } from "@better-auth/mcp";
import type { ClientMetadataResourceFetch } from "@better-auth/oauth-provider";
import { oauthProviderAuthServerMetadata } from "@better-auth/oauth-provider";
import {
  activeMemberForUser,
  authorizationServerTables,
  currentGrantId,
  type Database,
  ensureAuthorizationServerUser,
} from "@north/db";
import { type BetterAuthPlugin, betterAuth } from "better-auth";
import { createAuthEndpoint } from "better-auth/api";
import { setSessionCookie } from "better-auth/cookies";
import { jwt } from "better-auth/plugins";
import { z } from "zod";
import { GRANT_CLAIM } from "../oauth.ts";
import { SCOPES } from "../principal.ts";

/** Access tokens live at most this long (SPEC §3a: ≤ 1 hour). */
export const ACCESS_TOKEN_TTL_S = 3600;
/** Refresh tokens: rotated on each use, at most this long (≤ 30 days). */
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
/**
 * A grant's absolute lifetime, from the consent that opened it (decision 029): refresh rotation
 * never extends it, and the consent page's "up to 30 days" is what happens.
 */
export const GRANT_LIFETIME_S = REFRESH_TOKEN_TTL_S;
/** A spent refresh token replayed within this window gets the same answer, not a revocation. */
export const REFRESH_REUSE_GRACE_S = 30;
/** The authorization server's browser session: only long enough to finish signing in. */
export const AS_SESSION_TTL_S = 15 * 60;

/**
 * Where the library's endpoints live. The RFC 8414 metadata is served at the root
 * (`/.well-known/oauth-authorization-server`), where MCP clients look for it.
 */
export const AS_BASE_PATH = "/oauth";
export const SIGN_IN_PATH = "/sign-in";
export const CONSENT_PATH = "/sign-in/consent";

/**
 * The scope that makes the library issue refresh tokens. MCP hosts do not ask for it, so North
 * adds it to every authorization request (decision 017): the consent page names it ("stay
 * connected for up to 30 days") and it carries no access of its own.
 */
export const OFFLINE_ACCESS = "offline_access";
export const AS_SCOPES = [...SCOPES, OFFLINE_ACCESS] as const;

/** What the library hands an access-token claim extension (the fields North reads). */
interface GrantClaimInput {
  user?: { id: string } | null;
  client?: { clientId: string } | null;
}

export interface AuthorizationServerOptions {
  /** Pool on the app login role: the library's tables are in `north_auth`. */
  db: Database;
  /** The issuer: NORTH_PUBLIC_URL, or http://127.0.0.1:PORT locally. No trailing slash. */
  issuer: string;
  /** NORTH_SECRET_KEY: signs the library's cookies and signed queries, encrypts its keys. */
  secret: string;
  /** The SSRF-safe transport for Client ID Metadata Documents. */
  fetchClientMetadata: ClientMetadataResourceFetch;
}

/**
 * Server-only: opens the authorization server's browser session for a member North has already
 * authenticated (IdP or API token). Never routed over HTTP (`SERVER_ONLY`, and the app only
 * forwards the library's protocol endpoints).
 */
const establishSession = () =>
  ({
    id: "north-establish-session",
    endpoints: {
      northEstablishSession: createAuthEndpoint(
        "/north/establish-session",
        {
          method: "POST",
          body: z.object({ userId: z.string().uuid() }),
          metadata: { SERVER_ONLY: true },
        },
        async (ctx) => {
          const user = await ctx.context.internalAdapter.findUserById(ctx.body.userId);
          if (!user) throw new Error("no authorization-server user for this member");
          const session = await ctx.context.internalAdapter.createSession(user.id);
          await setSessionCookie(ctx, { session, user });
          return ctx.json({ sessionId: session.id });
        },
      ),
    },
  }) satisfies BetterAuthPlugin;

/**
 * The OAuth provider as `@better-auth/mcp` configures it for North's resource: its scopes, grant
 * types and lifetimes, open registration, and the claims North adds to each access token.
 */
function mcpProvider(db: Database, resource: string) {
  return mcp({
    resource,
    loginPage: SIGN_IN_PATH,
    consentPage: CONSENT_PATH,
    scopes: [...AS_SCOPES],
    grantTypes: ["authorization_code", "refresh_token"],
    accessTokenExpiresIn: ACCESS_TOKEN_TTL_S,
    refreshTokenExpiresIn: REFRESH_TOKEN_TTL_S,
    refreshTokenReuseInterval: REFRESH_REUSE_GRACE_S,
    allowDynamicClientRegistration: true,
    allowUnauthenticatedClientRegistration: true,
    clientRegistrationDefaultScopes: [...AS_SCOPES],
    // The member's organisation beside `sub` (their user id) and `scope` (SPEC §3a).
    customAccessTokenClaims: async ({ user }) => {
      const member = user ? await activeMemberForUser(db, user.id) : null;
      return member ? { north_org: member.organizationId } : {};
    },
    // The grant the token is issued under (decision 029): the resource server accepts it only
    // while that very grant holds, so tokens of a grant revoked before a re-consent stay dead.
    extensions: [
      {
        claims: {
          accessToken: async ({ user, client }: GrantClaimInput) => {
            const grant =
              user && client ? await currentGrantId(db, user.id, client.clientId) : null;
            return grant ? { [GRANT_CLAIM]: grant } : {};
          },
        },
      },
    ],
  });
}

/**
 * North's OAuth 2.1 authorization server (SPEC §3a), on better-auth's OAuth provider as
 * configured for MCP by `@better-auth/mcp`, with Client ID Metadata Documents from
 * `@better-auth/cimd` and JWT access tokens from better-auth's `jwt` plugin. North supplies the
 * sign-in and consent pages, the member mapping and the adjustments decision 017 lists.
 */
export function createAuthorizationServer(options: AuthorizationServerOptions) {
  const issuer = options.issuer.replace(/\/$/, "");
  const resource = `${issuer}/mcp`;
  const auth = betterAuth({
    appName: "North",
    baseURL: issuer,
    basePath: AS_BASE_PATH,
    secret: options.secret,
    telemetry: { enabled: false },
    trustedOrigins: [new URL(issuer).origin],
    database: drizzleAdapter(options.db, {
      provider: "pg",
      schema: authorizationServerTables,
      transaction: true,
    }),
    session: {
      expiresIn: AS_SESSION_TTL_S,
      updateAge: AS_SESSION_TTL_S,
    },
    advanced: {
      cookiePrefix: "north",
      useSecureCookies: issuer.startsWith("https://"),
      database: { generateId: () => randomUUID() },
    },
    logger: { disabled: true },
    // Cast: the plugins are typed against another copy of @better-auth/core than better-auth's
    // own (peer ranges differ), which TypeScript cannot unify; the API North calls is typed
    // below instead.
    plugins: [
      jwt({
        jwks: { keyPairConfig: { alg: "ES256" } },
        jwt: { issuer, expirationTime: `${ACCESS_TOKEN_TTL_S}s` },
        disableSettingJwtHeader: true,
      }),
      mcpProvider(options.db, resource),
      cimd({
        fetchClientMetadataResource: options.fetchClientMetadata,
        metadataProfile: "mcp-2026-07-28",
      }),
      establishSession(),
    ] as BetterAuthPlugin[],
  });
  const api = auth.api as unknown as NorthAuthApi;

  return {
    auth,
    issuer,
    resource,
    /** RFC 8414 metadata, served at the root. */
    metadata: oauthProviderAuthServerMetadata(auth as unknown as { api: NorthAuthApi }),
    api,
    /**
     * Records the member's decision on a pending authorization through the library's consent
     * endpoint (called in process, never routed from outside: the page in front of it narrows
     * the scopes). Returns where the browser goes next: the client, with a code or an error.
     */
    async consent(
      browserHeaders: Headers,
      body: { accept: boolean; scope?: string; oauth_query: string },
    ): Promise<{ url: string | undefined }> {
      const headers = new Headers({
        "content-type": "application/json",
        accept: "application/json",
      });
      const cookie = browserHeaders.get("cookie");
      if (cookie) headers.set("cookie", cookie);
      headers.set("origin", new URL(issuer).origin);
      const response = await auth.handler(
        new Request(`${issuer}${AS_BASE_PATH}/oauth2/consent`, {
          method: "POST",
          headers,
          body: JSON.stringify(body),
        }),
      );
      const answer = (await response.json().catch(() => ({}))) as { url?: string };
      if (!response.ok) {
        throw new Error(`the consent endpoint answered ${response.status}`);
      }
      return { url: answer.url };
    },
    /** Opens the browser session for an authenticated member: its id and Set-Cookie headers. */
    async openSession(userId: string): Promise<{ sessionId: string; cookies: string[] }> {
      await ensureAuthorizationServerUser(options.db, userId);
      const { headers, response } = await api.northEstablishSession({
        body: { userId },
        returnHeaders: true,
      });
      return { sessionId: response.sessionId, cookies: headers.getSetCookie() };
    },
  };
}

/** The library endpoints North calls from its own pages, typed by hand (see the cast above). */
export interface NorthAuthApi {
  getOAuthServerConfig: (...args: never[]) => unknown;
  getJwks(): Promise<{ keys: Record<string, unknown>[] }>;
  northEstablishSession(input: {
    body: { userId: string };
    returnHeaders: true;
  }): Promise<{ headers: Headers; response: { sessionId: string } }>;
  getSession(input: {
    headers: Headers;
  }): Promise<{ session: { id: string; userId: string }; user: { id: string } } | null>;
}

export type AuthorizationServer = ReturnType<typeof createAuthorizationServer>;
