/**
 * OAuth requests built by hand, as an attacker (or a host the SDK does not model) sends them:
 * a registration, an authorization URL with PKCE, a code exchange, the whole browser round trip.
 */
import { createHash, randomBytes } from "node:crypto";
import { createAuthResolver } from "@north/mcp-server";
import type { Page } from "playwright-core";
import type { TestDatabase } from "./database.ts";
import { authorizeInBrowser, loopbackRedirectUri, type SignInServer } from "./sign-in.ts";

/** A public DCR client with one loopback redirect URI, registered the way Claude Code does. */
export async function registerClient(
  base: string,
  name = "Attack client",
  redirectUri?: string,
): Promise<{ clientId: string; redirectUri: string }> {
  redirectUri ??= await loopbackRedirectUri();
  const response = await fetch(`${base}/oauth/oauth2/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  if (response.status !== 201) throw new Error(`registration: ${response.status}`);
  const { client_id: clientId } = (await response.json()) as { client_id: string };
  return { clientId, redirectUri };
}

/** An authorization request with PKCE S256 and North's resource, built by hand. */
export function authorizationRequest(
  base: string,
  client: { clientId: string; redirectUri: string },
  scope: string | null,
  extra: Record<string, string> = {},
) {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const url = new URL(`${base}/oauth/oauth2/authorize`);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", client.clientId);
  url.searchParams.set("redirect_uri", client.redirectUri);
  if (scope !== null) url.searchParams.set("scope", scope);
  url.searchParams.set("state", randomBytes(8).toString("hex"));
  url.searchParams.set("code_challenge", challenge);
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("resource", `${base}/mcp`);
  for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
  return { url, verifier };
}

export interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  scope?: string;
}

/** The code at North's token endpoint. */
export async function exchangeCode(
  base: string,
  client: { clientId: string; redirectUri: string },
  code: string,
  verifier: string,
): Promise<TokenAnswer> {
  const response = await fetch(`${base}/oauth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      code_verifier: verifier,
      resource: `${base}/mcp`,
    }),
  });
  if (!response.ok) throw new Error(`token: ${response.status} ${await response.text()}`);
  return (await response.json()) as TokenAnswer;
}

/** A whole authorization in the browser: `steps` drive North's pages; the code is exchanged. */
export async function authorizeAndExchange(
  server: SignInServer,
  page: Page,
  client: { clientId: string; redirectUri: string },
  scope: string | null,
  steps: (page: Page) => Promise<void>,
  extra: Record<string, string> = {},
): Promise<{ landed: URL; tokens: TokenAnswer | null }> {
  const { url, verifier } = authorizationRequest(server.base, client, scope, extra);
  const landed = await authorizeInBrowser(page, url, client.redirectUri, steps);
  const code = landed.searchParams.get("code");
  if (!code) return { landed, tokens: null };
  return { landed, tokens: await exchangeCode(server.base, client, code, verifier) };
}

/** What North's own resource server makes of a bearer token (the principal, or null). */
export async function principalOf(db: TestDatabase, server: SignInServer, accessToken: string) {
  const resolve = createAuthResolver(db.app.db, server.signIn.oauth);
  return resolve(
    new Request(`${server.base}/mcp`, { headers: { authorization: `Bearer ${accessToken}` } }),
  );
}
