import {
  type Database,
  grantRecordFor,
  resolveOAuthGrant,
  sameSignIn,
  type TargetFingerprint,
} from "@north/db";
import { Hono } from "hono";
import type { Logger } from "../logger.ts";
import { describeError } from "../logger.ts";
import { isLoopbackHost } from "../loopback.ts";
import { SCOPES } from "../principal.ts";
import { AS_BASE_PATH, type AuthorizationServer, OFFLINE_ACCESS } from "./authorization-server.ts";
import { authorizeAnswer } from "./authorize-answer.ts";
import type { BrowserSessions, SignedIn } from "./browser-session.ts";
import { observeMetadataFetches } from "./metadata-fetch.ts";
import { messagePage } from "./pages.ts";
import { registrationOverCaps, sweepUnconsentedClients } from "./registered-clients.ts";
import type { RegistrationLimits } from "./registration-limits.ts";
import { buildTokenRoutes } from "./token-endpoint.ts";

export interface ProtocolDeps {
  db: Database;
  as: AuthorizationServer;
  sessions: BrowserSessions;
  fingerprint: (value: string) => TargetFingerprint;
  logger: Logger;
  limits: RegistrationLimits;
}

/** The library endpoints the outside world may reach; everything else under the base path 404s. */
const PUBLIC_ENDPOINTS = new Set([
  "GET /oauth2/authorize",
  "POST /oauth2/token",
  "POST /oauth2/register",
  "POST /oauth2/revoke",
  "GET /jwks",
]);

/**
 * How North's clients authenticate at the token and revocation endpoints: public clients (CIMD,
 * native DCR) not at all, confidential DCR clients with their secret. No `private_key_jwt`.
 */
const CLIENT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"];

/**
 * The RFC 8414 fields North serves; test/security/sign-in-metadata.test.ts gives each its reason.
 * The library's others (DPoP, `private_key_jwt` signing algorithms, back-channel logout,
 * introspection) describe what North does not do, so they are not advertised.
 */
const ADVERTISED = new Set([
  "issuer",
  "authorization_endpoint",
  "token_endpoint",
  "jwks_uri",
  "registration_endpoint",
  "revocation_endpoint",
  "scopes_supported",
  "response_types_supported",
  "response_modes_supported",
  "grant_types_supported",
  "token_endpoint_auth_methods_supported",
  "revocation_endpoint_auth_methods_supported",
  "code_challenge_methods_supported",
  "authorization_response_iss_parameter_supported",
  "client_id_metadata_document_supported",
]);

/** Why a registration asks for something North does not do (the metadata lists none of it). */
function unsupportedClientMetadata(body: Record<string, unknown>): string | null {
  const method = body.token_endpoint_auth_method;
  if (method !== undefined && !CLIENT_AUTH_METHODS.includes(method as string)) {
    return `token_endpoint_auth_method must be one of ${CLIENT_AUTH_METHODS.join(", ")}`;
  }
  if (body.backchannel_logout_uri !== undefined || body.backchannel_logout_session_required) {
    return "back-channel logout is not supported";
  }
  if (body.dpop_bound_access_tokens === true) return "DPoP-bound access tokens are not supported";
  return null;
}

/**
 * North does not do DPoP (RFC 9449): its resource server accepts bearer tokens only, so the
 * library must never see a proof and bind a token to a key nobody checks.
 */
const withoutDpop = (request: Request) => {
  if (!request.headers.has("dpop")) return request;
  const headers = new Headers(request.headers);
  headers.delete("dpop");
  return new Request(request, { headers });
};

/** An http redirect to a loopback host: a native app on this computer (RFC 8252). */
export const isLoopbackRedirect = (uri: unknown) => {
  if (typeof uri !== "string") return false;
  try {
    const url = new URL(uri);
    return url.protocol === "http:" && isLoopbackHost(url.hostname);
  } catch {
    return false;
  }
};

const pageHeaders = {
  "Content-Security-Policy": "default-src 'none'; style-src 'self'; frame-ancestors 'none'",
  "Cache-Control": "no-store",
};

/**
 * A client id North may look up: present, at most 2,048 characters (a metadata-document URL),
 * and printable — a control character (a NUL) would reach PostgreSQL and fail there.
 */
export const isClientId = (value: string | null | undefined): value is string =>
  typeof value === "string" &&
  value.length > 0 &&
  value.length <= 2048 &&
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  !/[\u0000-\u001f\u007f]/.test(value);

/**
 * The library's RFC 8414 document, trimmed to what North serves: the four scopes (North adds
 * offline_access itself, so no client needs to ask for it) and North's client authentication.
 */
async function trimmedMetadata(as: AuthorizationServer, request: Request): Promise<Response> {
  const response = await as.metadata(request);
  if (!response.ok) return response;
  const library = (await response.json()) as Record<string, unknown>;
  const document = Object.fromEntries(
    Object.entries(library).filter(([key]) => ADVERTISED.has(key)),
  );
  document.scopes_supported = [...SCOPES];
  document.token_endpoint_auth_methods_supported = [...CLIENT_AUTH_METHODS];
  document.revocation_endpoint_auth_methods_supported = [...CLIENT_AUTH_METHODS];
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(document), { status: 200, headers });
}

/**
 * What is wrong with an authorization request before the library sees it: PKCE S256 and
 * RFC 8707 `resource` are required, and a client id North may look up. Null: nothing.
 */
function authorizeProblem(params: URLSearchParams, resource: string): string | null {
  return params.get("code_challenge_method") !== "S256" || !params.get("code_challenge")
    ? "PKCE with S256 is required (code_challenge and code_challenge_method=S256)."
    : params.getAll("resource").length !== 1 || params.get("resource") !== resource
      ? `The resource parameter must be ${resource}.`
      : !isClientId(params.get("client_id"))
        ? "The client_id parameter is missing or not a client id."
        : null;
}

/**
 * Whether the member's current grant to the client is live and was opened the way this
 * browser session signed in (the same method; for a pasted token, the same token and cap).
 */
async function grantHolds(db: Database, signedIn: SignedIn, clientId: string): Promise<boolean> {
  if (!clientId || !(await resolveOAuthGrant(db, signedIn.userId, clientId, null))) {
    return false;
  }
  const opened = await grantRecordFor(db, signedIn.userId, clientId);
  return opened !== null && sameSignIn(opened, signedIn.record);
}

/**
 * The authorization server's protocol surface: RFC 8414 metadata at the root, and the library's
 * endpoints under {@link AS_BASE_PATH}, each with the adjustment decision 017 records.
 */
export function buildProtocolRoutes(deps: ProtocolDeps) {
  const app = new Hono<{ Variables: { requestId: string } }>();
  const { auth } = deps.as;
  const forward = (request: Request) => auth.handler(withoutDpop(request));
  // Every library endpoint may resolve a metadata document: each runs in its address's scope.
  app.use(`${AS_BASE_PATH}/*`, deps.limits.scope);

  const metadata = (request: Request) => trimmedMetadata(deps.as, request);
  app.get("/.well-known/oauth-authorization-server", (c) => metadata(c.req.raw));
  app.get(`/.well-known/oauth-authorization-server${AS_BASE_PATH}`, (c) => metadata(c.req.raw));

  // Authorization: PKCE S256 and RFC 8707 `resource` are required before the library sees the
  // request; the scope is what the member may hold, plus the refresh-token scope.
  app.get(`${AS_BASE_PATH}/oauth2/authorize`, async (c) => {
    const url = new URL(c.req.url);
    const params = url.searchParams;
    const problem = authorizeProblem(params, deps.as.resource);
    if (problem) {
      return c.html(
        messagePage(
          "This sign-in request is not valid",
          problem,
          "Start again from your Claude app.",
        ),
        400,
        pageHeaders,
      );
    }
    const requested = (params.get("scope") ?? "").split(" ").filter(Boolean);
    let scopes = requested.length ? requested : [...SCOPES];
    // A library session North has no record of is ended here, so the library asks for a
    // sign-in instead of acting on it (decision 029).
    const signedIn = await deps.sessions.current(c.req.raw.headers);
    if (signedIn) {
      const narrowed = scopes.filter((s) => signedIn.grantable.includes(s));
      // The library answers a remembered consent with a code at once, without asking. It may
      // only when this sign-in may grant what is asked and opened the grant it would reuse;
      // otherwise the consent page decides (a new grant bound to this sign-in, or nothing).
      const reusable =
        narrowed.some((s) => s !== OFFLINE_ACCESS) &&
        (await grantHolds(deps.db, signedIn, params.get("client_id") ?? ""));
      // Nothing left: keep the request as it was, so the consent page can say so.
      if (narrowed.some((s) => s !== OFFLINE_ACCESS)) scopes = narrowed;
      if (!reusable) params.set("prompt", "consent");
    }
    if (!scopes.includes(OFFLINE_ACCESS)) scopes.push(OFFLINE_ACCESS);
    params.set("scope", scopes.join(" "));
    // No DPoP (see withoutDpop): a code bound to a key would need a proof North never passes on.
    params.delete("dpop_jkt");
    const answer = await observeMetadataFetches(() => forward(new Request(url, c.req.raw)));
    return authorizeAnswer(
      {
        ...answer,
        response: answer.result,
        clientId: params.get("client_id"),
        requestId: c.get("requestId"),
      },
      { logger: deps.logger, errorPage: new URL(`${deps.as.issuer}${AS_BASE_PATH}/error`) },
    );
  });

  // Dynamic Client Registration: a loopback redirect (Claude Code, MCP Inspector) is a native
  // application even when the client does not say so (RFC 8252).
  app.post(`${AS_BASE_PATH}/oauth2/register`, async (c) => {
    const overBudget = await deps.limits.register(c);
    if (overBudget) return overBudget;
    let body: Record<string, unknown>;
    try {
      body = (await c.req.json()) as Record<string, unknown>;
    } catch {
      return c.json(
        { error: "invalid_client_metadata", error_description: "body must be JSON" },
        400,
      );
    }
    if (!body || typeof body !== "object" || Array.isArray(body)) {
      return c.json(
        { error: "invalid_client_metadata", error_description: "body must be an object" },
        400,
      );
    }
    const unsupported = unsupportedClientMetadata(body);
    if (unsupported) {
      return c.json({ error: "invalid_client_metadata", error_description: unsupported }, 400);
    }
    const overCaps = registrationOverCaps(body);
    if (overCaps) return c.json(overCaps, 400);
    await sweepUnconsentedClients(deps.db).catch((error) =>
      deps.logger.error(describeError(error), "sweep of unconsented clients failed"),
    );
    const redirects = body.redirect_uris;
    if (
      body.application_type === undefined &&
      Array.isArray(redirects) &&
      redirects.length > 0 &&
      redirects.every(isLoopbackRedirect)
    ) {
      body.application_type = "native";
    }
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    return forward(new Request(c.req.url, { method: "POST", headers, body: JSON.stringify(body) }));
  });

  app.route("/", buildTokenRoutes(deps, forward));

  app.get(`${AS_BASE_PATH}/jwks`, (c) => forward(c.req.raw));

  app.all(`${AS_BASE_PATH}/*`, (c) => {
    const key = `${c.req.method} ${c.req.path.slice(AS_BASE_PATH.length)}`;
    if (PUBLIC_ENDPOINTS.has(key)) return forward(c.req.raw);
    return c.json({ error: "not_found" }, 404);
  });

  return app;
}
