import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oidc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./support/console.ts";
import { signInAtTestIdp, startTestIdp, type TestIdp } from "./support/oidc-idp.ts";

/**
 * The test identity provider is a real OpenID Connect provider: a maintained relying-party
 * library (openid-client) discovers it, runs the authorization code flow with PKCE, state and
 * nonce through a real browser, and verifies the signed ID token it returns. By default the ID
 * token is thin (oidc-provider's own behaviour, Okta's): the email claims are at userinfo only.
 */

const CLIENT_ID = "north-test";
const CLIENT_SECRET = "north-test-secret-0123456789";

const VERIFIED = {
  sub: "u-ada",
  email: "ada@firm.example",
  email_verified: true,
  name: "Ada Lovelace",
};
const UNVERIFIED = {
  sub: "u-bob",
  email: "bob@firm.example",
  email_verified: false,
  name: "Bob Unverified",
};

let idp: TestIdp;
/** The same IdP with `idTokenClaims`: the email claims in the ID token too (Google's way). */
let fatIdp: TestIdp;
let browser: Browser;
let callback: Server;
let redirectUri: string;

beforeAll(async () => {
  // The relying party's redirect URI: a tiny server that only has to answer the browser.
  callback = createServer((_req, res) => {
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    res.end("<!doctype html><title>callback</title><p>signed in</p>");
  });
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;

  const config = {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [redirectUri] }],
    accounts: [VERIFIED, UNVERIFIED],
  };
  [idp, fatIdp, browser] = await Promise.all([
    startTestIdp(config),
    startTestIdp({ ...config, idTokenClaims: true }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await fatIdp?.stop();
  await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
});

async function relyingParty(auth: oidc.ClientAuth, provider = idp): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(provider.issuer), CLIENT_ID, undefined, auth, {
    execute: [oidc.allowInsecureRequests], // the issuer is http on loopback
  });
}

/** Starts the flow in a fresh browser context; returns the page showing the IdP's login form. */
async function beginSignIn(config: oidc.Configuration) {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email profile",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  const page: Page = await (await browser.newContext()).newPage();
  await page.goto(url.href);
  expect(page.url()).toMatch(new RegExp(`^${config.serverMetadata().issuer}/interaction/`));
  return {
    page,
    checks: { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce },
  };
}

describe("test identity provider (oidc-provider)", () => {
  it("publishes discovery for code flow with PKCE S256 and both client secret methods", async () => {
    const config = await relyingParty(oidc.ClientSecretBasic(CLIENT_SECRET));
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(idp.issuer);
    expect(metadata.response_types_supported).toEqual(["code"]);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["client_secret_basic", "client_secret_post"]),
    );
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(["openid", "email", "profile"]),
    );
  });

  it.each([
    { account: VERIFIED, login: VERIFIED.email, auth: "client_secret_basic" },
    { account: UNVERIFIED, login: UNVERIFIED.sub, auth: "client_secret_post" },
  ])(
    "signs in $login with a thin ID token and email + email_verified=$account.email_verified at userinfo ($auth)",
    async ({ account, login, auth }) => {
      const config = await relyingParty(
        auth === "client_secret_basic"
          ? oidc.ClientSecretBasic(CLIENT_SECRET)
          : oidc.ClientSecretPost(CLIENT_SECRET),
      );
      const { page, checks } = await beginSignIn(config);
      await signInAtTestIdp(page, login);

      const current = new URL(page.url());
      expect(current.origin + current.pathname).toBe(redirectUri);
      expect(current.searchParams.get("iss")).toBe(idp.issuer);
      const tokens = await oidc.authorizationCodeGrant(config, current, checks);
      const claims = tokens.claims();
      expect(claims).toMatchObject({
        iss: idp.issuer,
        aud: CLIENT_ID,
        sub: account.sub,
        nonce: checks.expectedNonce,
      });
      expect(claims).not.toHaveProperty("email");
      expect(claims).not.toHaveProperty("email_verified");
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, account.sub);
      expect(userinfo).toEqual(account);
      await page.context().close();
    },
  );

  it("with idTokenClaims, puts email, email_verified and name in the ID token too", async () => {
    const config = await relyingParty(oidc.ClientSecretBasic(CLIENT_SECRET), fatIdp);
    const { page, checks } = await beginSignIn(config);
    await signInAtTestIdp(page, VERIFIED.email);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), checks);
    expect(tokens.claims()).toMatchObject({ iss: fatIdp.issuer, ...VERIFIED });
    await page.context().close();
  });

  it("re-shows the login form for an unknown login, then still accepts a known one", async () => {
    const config = await relyingParty(oidc.ClientSecretBasic(CLIENT_SECRET));
    const { page, checks } = await beginSignIn(config);
    const formUrl = page.url();

    await expect(signInAtTestIdp(page, "mallory@elsewhere.example")).rejects.toThrow(
      /rejected login "mallory@elsewhere.example": Unknown account/,
    );
    expect(page.url().startsWith(`${idp.issuer}/interaction/`)).toBe(true);
    expect(await page.locator('input[name="login"]').count()).toBe(1);
    expect(await page.locator('button[type="submit"]').textContent()).toBe("Sign in");
    expect(await page.locator('[role="alert"]').textContent()).toBe("Unknown account.");
    expect(page.url()).toBe(`${formUrl}/login`);

    await signInAtTestIdp(page, VERIFIED.email);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), checks);
    expect(tokens.claims()).toMatchObject({ sub: VERIFIED.sub });
    await page.context().close();
  });
});

describe("test identity provider process lifecycle", () => {
  it("startTestIdp rejects with the process's stderr when the IdP cannot start", async () => {
    await expect(startTestIdp({ clients: [], accounts: [] })).rejects.toThrow(
      /exited early[\s\S]*IDP_CONFIG\.clients must be non-empty/,
    );
  });

  it("stop() ends the process, and the IdP exits by itself when its stdin closes", async () => {
    const config = {
      clients: [{ client_id: "c", client_secret: "s", redirect_uris: [redirectUri] }],
      accounts: [],
    };
    const other = await startTestIdp(config);
    expect((await fetch(`${other.issuer}/.well-known/openid-configuration`)).status).toBe(200);
    await other.stop();
    // Bounded: under the whole suite another process may take the freed port and never answer.
    await expect(
      fetch(`${other.issuer}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(5_000),
      }),
    ).rejects.toThrow();

    // What happens when a test run dies: the kept-open stdin pipe closes.
    const child = spawn("node", ["test/support/oidc-idp-process.mjs"], {
      env: { ...process.env, IDP_CONFIG: JSON.stringify({ port: 0, ...config }) },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const [firstLine] = (await once(child.stdout, "data")) as [Buffer];
    expect(String(firstLine)).toMatch(
      /^READY \{"issuer":"http:\/\/127\.0\.0\.1:(\d+)","port":\1\}\n$/,
    );
    const exited = once(child, "exit");
    child.stdin.end();
    expect(await exited).toEqual([0, null]);
    // Two IdP starts under Node: under the whole suite on two cores one start alone has taken
    // over 20 s (support/oidc-idp.ts), so the default 60 s is too tight for both.
  }, 180_000);
});
