import type { Database, TargetFingerprint } from "@north/db";
import { Hono } from "hono";
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import type { Logger } from "../logger.ts";
import type { OAuthOptions } from "../oauth.ts";
import { type AuthorizationServer, createAuthorizationServer } from "./authorization-server.ts";
import { createBrowserSessions } from "./browser-session.ts";
import { createIdentityProviders } from "./identity-provider.ts";
import { createMetadataFetch } from "./metadata-fetch.ts";
import { withPinnedClientMetadata } from "./pinned-client-metadata.ts";
import { buildProtocolRoutes } from "./protocol.ts";
import { sweepUnconsentedClients } from "./registered-clients.ts";
import { createRegistrationLimits, type RegistrationLimitsOptions } from "./registration-limits.ts";
import { buildSignInRoutes } from "./routes.ts";
import { createSecretBox } from "./secret-box.ts";

export { createSecretBox } from "./secret-box.ts";

export interface SignInOptions {
  db: Database;
  /** NORTH_PUBLIC_URL, or http://127.0.0.1:PORT locally. */
  issuer: string;
  /** NORTH_SECRET_KEY (or the embedded install's own). */
  secret: string;
  fingerprint: (value: string) => TargetFingerprint;
  logger: Logger;
  /** Ends a console sign-in through the IdP (see `SignInDeps.openConsole`). */
  openConsole?: Parameters<typeof buildSignInRoutes>[0]["openConsole"];
  /** Per-address budgets for DCR and metadata-document lookups (defaults: registration-limits.ts). */
  registrationLimits?: RegistrationLimitsOptions;
  /** Tests only: the CIMD transport (the default refuses every non-public address). */
  fetchClientMetadata?: Parameters<typeof createAuthorizationServer>[0]["fetchClientMetadata"];
}

/** How often an unknown key id may make the resource server re-read the signing keys. */
const KEY_RELOAD_INTERVAL_MS = 10_000;

/**
 * The resource server's view of the authorization server's signing keys: read from the
 * library (its database), not fetched over HTTP from this same process, and re-read when a
 * token names a key not seen yet — at most every ten seconds, so forged key ids cost nothing.
 */
function localKeys(as: AuthorizationServer): JWTVerifyGetKey {
  let keys: JWTVerifyGetKey | null = null;
  let loadedAt = 0;
  const load = async () => {
    const set = (await as.api.getJwks()) as unknown as JSONWebKeySet;
    keys = createLocalJWKSet(set);
    loadedAt = Date.now();
    return keys;
  };
  return async (header, token) => {
    const current = keys ?? (await load());
    try {
      return await current(header, token);
    } catch (error) {
      if (Date.now() - loadedAt < KEY_RELOAD_INTERVAL_MS) throw error;
      return (await load())(header, token);
    }
  };
}

/**
 * North's sign-in (SPEC §3a): the authorization server, its pages, and the resource-server
 * options that verify what it issues.
 */
export function createSignIn(options: SignInOptions) {
  const limits = createRegistrationLimits(options.logger, options.registrationLimits, () =>
    sweepUnconsentedClients(options.db),
  );
  const as = createAuthorizationServer({
    db: options.db,
    issuer: options.issuer,
    secret: options.secret,
    // A lookup over its address's budget is refused before the pinned copy could stand in.
    fetchClientMetadata: limits.metered(
      withPinnedClientMetadata(options.fetchClientMetadata ?? createMetadataFetch()),
    ),
  });
  const secrets = createSecretBox(options.secret);
  const sessions = createBrowserSessions(options.db, as);
  const routes = new Hono<{ Variables: { requestId: string } }>();
  routes.route("/", buildProtocolRoutes({ ...options, as, sessions, limits }));
  routes.route(
    "/sign-in",
    buildSignInRoutes({ ...options, as, sessions, idps: createIdentityProviders(), secrets }),
  );
  const oauth: OAuthOptions = {
    issuer: as.issuer,
    resourceUrl: as.resource,
    keys: localKeys(as),
    grants: true,
  };
  return {
    as,
    routes,
    oauth,
    /**
     * Resolves once the library has initialised (it seeds the MCP resource row on first use):
     * awaited before listening, so a database problem fails startup instead of a later request.
     */
    ready: async () => {
      await as.auth.$context;
    },
  };
}

export type SignIn = ReturnType<typeof createSignIn>;
