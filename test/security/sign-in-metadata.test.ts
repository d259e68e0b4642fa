import { randomUUID } from "node:crypto";
import { createApiToken } from "@north/db";
import {
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  type JWK,
  type KeyObject,
  SignJWT,
} from "jose";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import {
  authorizeInBrowser,
  type CimdHost,
  decide,
  loopbackRedirectUri,
  type SignInServer,
  signInWithToken,
  startCimdHost,
  startSignInServer,
  TestOAuthClient,
} from "../support/sign-in.ts";

/**
 * Issue 21, point 13: the metadata advertises only what North does. The library's defaults
 * advertised DPoP, `private_key_jwt` and back-channel logout, none of which North uses or tests —
 * and the library honoured them: a DPoP proof got a "DPoP-bound" token the resource server treats
 * as a bearer token, and a metadata-document client authenticated with `private_key_jwt`. The
 * document now lists only what North serves, and each of those is refused or ignored.
 */

let db: TestDatabase;
let server: SignInServer;
let cimd: CimdHost;
let browser: Browser;
let serverUrl: string;
let memberToken: string;

beforeAll(async () => {
  db = await createTestDatabase();
  cimd = await startCimdHost();
  server = await startSignInServer(db, { cimd });
  browser = await launchChromium();
  serverUrl = `${server.base}/mcp`;
  const ws = await createWorkspace(db.owner.db);
  memberToken = (
    await createApiToken(db.owner.db, {
      ...ws.member,
      scopes: ["profile:write", "memory:read", "memory:write"],
      expiresAt: null,
    })
  ).token;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await cimd?.close();
  await db?.drop();
});

const tokenEndpoint = () => `${server.base}/oauth/oauth2/token`;

const register = (metadata: Record<string, unknown>) =>
  fetch(`${server.base}/oauth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Metadata test client",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...metadata,
    }),
  });

const tokenRequest = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(tokenEndpoint(), {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form),
  });

/** An RFC 9449 DPoP proof for a POST to `htu`, signed by the client's key. */
const dpopProof = (key: { privateKey: KeyObject; jwk: JWK }, htu: string) =>
  new SignJWT({ htm: "POST", htu, jti: randomUUID() })
    .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: key.jwk })
    .setIssuedAt()
    .sign(key.privateKey);

async function clientKey() {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  return { privateKey: privateKey as KeyObject, jwk: await exportJWK(publicKey) };
}

/**
 * Runs the SDK's `auth()` up to the authorization URL, lets `adjust` change it, and signs in and
 * consents in the browser; returns the code, the landing URL and the client (with its verifier).
 */
async function authorizationCode(client: TestOAuthClient, adjust: (url: URL) => void = () => {}) {
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  expect(await auth(client, { serverUrl })).toBe("REDIRECT");
  const url = new URL(client.authorizationUrl?.toString() ?? "");
  adjust(url);
  const page: Page = await (await browser.newContext()).newPage();
  const landed = await authorizeInBrowser(page, url, client.redirectUri, async (p) => {
    await signInWithToken(p, memberToken);
    await decide(p, "allow");
  });
  await page.context().close();
  return { code: landed.searchParams.get("code") ?? "", landed };
}

const codeExchange = (client: TestOAuthClient, code: string) => ({
  grant_type: "authorization_code",
  code,
  redirect_uri: client.redirectUri,
  client_id: client.clientInformation()?.client_id ?? "",
  code_verifier: client.codeVerifier(),
  resource: serverUrl,
});

describe("the authorization server advertises only what North does", () => {
  it("publishes exactly the fields North serves, each for a reason", async () => {
    for (const path of ["", "/oauth"]) {
      const response = await fetch(`${server.base}/.well-known/oauth-authorization-server${path}`);
      const document = (await response.json()) as Record<string, unknown>;
      const endpoint = (name: string) => `${server.base}/oauth/${name}`;
      expect(document).toStrictEqual({
        // RFC 8414 §2: the issuer is North's public URL, the tokens' `iss`.
        issuer: server.base,
        // The code flow (the only one) and its token exchange and refresh.
        authorization_endpoint: endpoint("oauth2/authorize"),
        token_endpoint: endpoint("oauth2/token"),
        // The keys the access tokens are signed with (RFC 9068).
        jwks_uri: endpoint("jwks"),
        // DCR (RFC 7591) and revocation (RFC 7009), both routed from outside.
        registration_endpoint: endpoint("oauth2/register"),
        revocation_endpoint: endpoint("oauth2/revoke"),
        // What a client may ask for (SPEC §3a: the four scopes; offline_access is North's own).
        scopes_supported: ["profile:write", "memory:read", "memory:write", "admin"],
        response_types_supported: ["code"],
        response_modes_supported: ["query"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        // Public clients (CIMD and native DCR), and confidential DCR clients with a secret.
        token_endpoint_auth_methods_supported: [
          "none",
          "client_secret_basic",
          "client_secret_post",
        ],
        revocation_endpoint_auth_methods_supported: [
          "none",
          "client_secret_basic",
          "client_secret_post",
        ],
        code_challenge_methods_supported: ["S256"],
        // RFC 9207: the redirect carries `iss` (checked in the DPoP flow below).
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
      });
    }
  });

  it("registers a confidential client with a secret it must then present", async () => {
    for (const method of ["client_secret_basic", "client_secret_post"]) {
      const response = await register({
        redirect_uris: ["https://host.example.com/callback"],
        token_endpoint_auth_method: method,
      });
      expect(response.status).toBe(201);
      const client = (await response.json()) as { client_id: string; client_secret: string };
      expect(client.client_secret).toBeTruthy();
      const revoke = (secret: string) => {
        const basic = method === "client_secret_basic";
        return fetch(`${server.base}/oauth/oauth2/revoke`, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            ...(basic
              ? {
                  Authorization: `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString("base64")}`,
                }
              : {}),
          },
          body: new URLSearchParams({
            token: "not-a-token",
            ...(basic ? {} : { client_id: client.client_id, client_secret: secret }),
          }),
        });
      };
      // The library answers an unknown token `invalid_request`; only a bad secret is `invalid_client`.
      const errorOf = async (response: Response) =>
        ((await response.json()) as { error?: string }).error;
      expect(await errorOf(await revoke("wrong-secret"))).toBe("invalid_client");
      expect(await errorOf(await revoke(client.client_secret))).not.toBe("invalid_client");
    }
  });

  it("refuses a registration that asks for private_key_jwt", async () => {
    const { jwk } = await clientKey();
    const response = await register({
      redirect_uris: [await loopbackRedirectUri()],
      token_endpoint_auth_method: "private_key_jwt",
      jwks: { keys: [{ ...jwk, alg: "ES256", use: "sig" }] },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("refuses a registration with a back-channel logout URI", async () => {
    const response = await register({
      redirect_uris: [await loopbackRedirectUri()],
      token_endpoint_auth_method: "none",
      backchannel_logout_uri: "https://logout.example.com/backchannel",
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("refuses a registration that asks for DPoP-bound access tokens", async () => {
    const response = await register({
      redirect_uris: [await loopbackRedirectUri()],
      token_endpoint_auth_method: "none",
      dpop_bound_access_tokens: true,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("refuses a private_key_jwt client assertion from a metadata-document client", async () => {
    const key = await clientKey();
    const uri = await loopbackRedirectUri();
    const clientId = cimd.serve("private-key-jwt", {});
    cimd.serve("private-key-jwt", {
      client_id: clientId,
      client_name: "Assertion client",
      redirect_uris: [uri],
      token_endpoint_auth_method: "private_key_jwt",
      jwks: { keys: [{ ...key.jwk, alg: "ES256", use: "sig" }] },
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    const client = new TestOAuthClient(uri, clientId, "Assertion client");
    const { code } = await authorizationCode(client);
    const assertion = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(server.base)
      .setIssuedAt()
      .setExpirationTime("1m")
      .sign(key.privateKey);
    const response = await tokenRequest({
      ...codeExchange(client, code),
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: assertion,
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client");
  });

  it("issues bearer tokens, never DPoP-bound ones, to a client that sends DPoP proofs", async () => {
    const key = await clientKey();
    const client = new TestOAuthClient(await loopbackRedirectUri());
    // RFC 9449 §10: the authorization request may bind the code to the key as well.
    const thumbprint = await calculateJwkThumbprint(key.jwk);
    const { code, landed } = await authorizationCode(client, (url) =>
      url.searchParams.set("dpop_jkt", thumbprint),
    );
    expect(landed.searchParams.get("iss")).toBe(server.base);

    const exchanged = await tokenRequest(codeExchange(client, code), {
      DPoP: await dpopProof(key, tokenEndpoint()),
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as {
      token_type: string;
      access_token: string;
      refresh_token: string;
    };
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(decodeJwt(tokens.access_token).cnf).toBeUndefined();

    const refreshed = await tokenRequest(
      {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        client_id: client.clientInformation()?.client_id ?? "",
        resource: serverUrl,
      },
      { DPoP: await dpopProof(key, tokenEndpoint()) },
    );
    expect(refreshed.status).toBe(200);
    const rotated = (await refreshed.json()) as {
      token_type: string;
      access_token: string;
      refresh_token: string;
    };
    expect(rotated.token_type.toLowerCase()).toBe("bearer");
    expect(decodeJwt(rotated.access_token).cnf).toBeUndefined();

    // `none` at the revocation endpoint: a public client revokes with its id alone.
    const revoked = await fetch(`${server.base}/oauth/oauth2/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: rotated.refresh_token,
        token_type_hint: "refresh_token",
        client_id: client.clientInformation()?.client_id ?? "",
      }),
    });
    expect(revoked.status).toBe(200);
  });
});
