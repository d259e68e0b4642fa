import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { createFingerprinter, freePort } from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createMetadataFetch,
  createRateLimiter,
  createSignIn,
  type HttpServerHandle,
  type RegistrationLimitsOptions,
  type SignIn,
  startHttpServer,
} from "@north/mcp-server";
import { buildAdminApp, openConsoleSessionForMember } from "@north/web";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { launchChromium } from "./console.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { capturingLogger } from "./logs.ts";
import { forwardTo, TEST_AUDIT_KEY } from "./mcp.ts";
import { selfSignedCertificate } from "./tls.ts";

export const TEST_SECRET_KEY = "test-secret-key-for-north-sign-in-suites-0123456789";
/** The host name the test's Client ID Metadata Documents are served under (resolved locally). */
export const CIMD_HOST = "client.north.test";
/**
 * The CIMD host listens on 127.0.0.2, the one special address the test transport lets through;
 * these names resolve to addresses it must refuse without connecting.
 */
const CIMD_ADDRESS = "127.0.0.2";
export const LOOPBACK_HOST = "loopback.north.test";
export const PRIVATE_HOST = "private.north.test";
const TEST_DNS: Record<string, string> = {
  [CIMD_HOST]: CIMD_ADDRESS,
  [LOOPBACK_HOST]: "127.0.0.1",
  [PRIVATE_HOST]: "10.20.30.40",
};

export interface SignInServer {
  /** `http://127.0.0.1:PORT`: the issuer; the MCP resource is `${base}/mcp`. */
  base: string;
  /** The MCP resource, `${base}/mcp`. */
  mcpUrl: string;
  signIn: SignIn;
  logs: string[];
  /** Every answer to `POST /mcp`, in order: how the resource server met each host's call. */
  mcpAnswers: McpAnswer[];
  close(): Promise<void>;
}

/** One answer of the resource server: its status and `WWW-Authenticate` challenge. */
export interface McpAnswer {
  status: number;
  challenge: string | null;
}

/** A CIMD host: an https server with a certificate for {@link CIMD_HOST}, on 127.0.0.1. */
export interface CimdHost {
  port: number;
  /** Serves `document` at `https://CIMD_HOST:PORT/<name>.json` (127.0.0.2); returns that URL. */
  serve(name: string, document: Record<string, unknown>): string;
  /** The transport North uses: the real one, told that CIMD_HOST is this server. */
  fetch: ReturnType<typeof createMetadataFetch>;
  requests: string[];
  close(): Promise<void>;
}

export async function startCimdHost(): Promise<CimdHost> {
  const { cert, key } = selfSignedCertificate(CIMD_HOST);
  const documents = new Map<string, string>();
  const requests: string[] = [];
  const server: Server = createHttpsServer({ cert, key }, (req, res) => {
    requests.push(req.url ?? "");
    const body = documents.get(req.url ?? "");
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, CIMD_ADDRESS, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    requests,
    serve(name, document) {
      documents.set(`/${name}.json`, JSON.stringify(document));
      return `https://${CIMD_HOST}:${port}/${name}.json`;
    },
    fetch: createMetadataFetch({
      lookup: async (hostname) => {
        const address = TEST_DNS[hostname];
        return address ? [{ address, family: 4 as const }] : [];
      },
      allowAddress: (ip) => ip === CIMD_ADDRESS,
      tlsCa: cert,
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The real server with North's authorization server on: transport guard, real token resolver
 * (API tokens and North's JWTs with the per-request grant check), sign-in pages and console,
 * on a random loopback port that is also the issuer's.
 */
export async function startSignInServer(
  db: TestDatabase,
  options: {
    cimd?: Pick<CimdHost, "fetch">;
    allowedOrigins?: string[];
    registrationLimits?: RegistrationLimitsOptions;
  } = {},
): Promise<SignInServer> {
  const { logger, logs } = capturingLogger();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const signIn = createSignIn({
    db: db.app.db,
    issuer: base,
    secret: TEST_SECRET_KEY,
    fingerprint: createFingerprinter(TEST_AUDIT_KEY),
    logger,
    fetchClientMetadata: options.cimd?.fetch,
    // Every suite registers from 127.0.0.1: budgets only the registration suite spends.
    registrationLimits: options.registrationLimits ?? {
      registrationsPerAddress: 1_000,
      resolutionsPerAddress: 1_000,
    },
    openConsole: (c, member) =>
      openConsoleSessionForMember(c, member, { db: db.app.db, requestId: c.get("requestId") }),
  });
  const app = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db, signIn.oauth),
    oauth: signIn.oauth,
    signIn,
    limiter: createRateLimiter({
      writesPerMinute: 1_000,
      readsPerMinute: 1_000,
      protocolRequestsPerMinute: 1_000,
    }),
    logger,
    auditKey: TEST_AUDIT_KEY,
    allowedOrigins: options.allowedOrigins,
    admin: buildAdminApp({ db: db.app.db, auditKey: TEST_AUDIT_KEY, logger }),
  });
  await signIn.ready();
  const mcpAnswers: McpAnswer[] = [];
  const recorded = async (request: Request, env?: unknown) => {
    const response = await app.fetch(request, env as never);
    if (request.method === "POST" && new URL(request.url).pathname === "/mcp") {
      mcpAnswers.push({
        status: response.status,
        challenge: response.headers.get("www-authenticate"),
      });
    }
    return response;
  };
  const server: HttpServerHandle = await startHttpServer(recorded, {
    port,
    hostname: "127.0.0.1",
  });
  return { base, mcpUrl: `${base}/mcp`, signIn, logs, mcpAnswers, close: () => server.close() };
}

/**
 * The MCP SDK's OAuth client side, in memory: what Claude Code or MCP Inspector keep on disk.
 * `redirectToAuthorization` only records the URL; the test's browser goes there.
 */
export class TestOAuthClient implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  /** What {@link connect} asks for; unset, the SDK asks for what the resource metadata lists. */
  scope: string | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private savedTokens: OAuthTokens | undefined;
  private verifier = "";

  constructor(
    readonly redirectUri: string,
    readonly metadataUrl?: string,
    readonly clientName = "North test client",
  ) {}

  get redirectUrl() {
    return this.redirectUri;
  }
  get clientMetadataUrl() {
    return this.metadataUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * A loopback redirect URI on a port free right now, as a native client (Claude Code, MCP
 * Inspector) picks one. Fixed ports collided with ports other suites had picked. The port is
 * held from here on by the URI's listener (`loopbackListener`): a port given back between two
 * sign-ins of one test was taken by an outgoing connection's ephemeral port (`EADDRINUSE`).
 */
export async function loopbackRedirectUri(): Promise<string> {
  const uri = `http://127.0.0.1:${await freePort()}/callback`;
  await loopbackListener(uri);
  return uri;
}

/** One listener per loopback redirect URI, kept for the test file; a sign-in waits on it. */
type LoopbackListener = { server: HttpServer; landed: ((url: URL) => void) | null };
const loopbackListeners = new Map<string, Promise<LoopbackListener>>();

function loopbackListener(redirectUri: string): Promise<LoopbackListener> {
  const held = loopbackListeners.get(redirectUri);
  if (held) return held;
  const target = new URL(redirectUri);
  const listening = new Promise<LoopbackListener>((resolve, reject) => {
    const listener: LoopbackListener = {
      server: createHttpServer((req, res) => {
        const url = new URL(req.url ?? "/", redirectUri);
        // Only the redirect itself: a browser also asks this origin for /favicon.ico, sometimes
        // late enough to reach the next sign-in.
        if (url.pathname !== target.pathname || !listener.landed) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { "content-type": "text/plain" }).end("back in the client");
        listener.landed(url);
        listener.landed = null;
      }),
      landed: null,
    };
    // A port already taken fails here at once, instead of a test waiting out its timeout.
    listener.server.once("error", reject);
    listener.server.listen(Number(target.port), "127.0.0.1", () => {
      listener.server.unref();
      resolve(listener);
    });
  });
  loopbackListeners.set(redirectUri, listening);
  listening.catch(() => loopbackListeners.delete(redirectUri));
  return listening;
}

/**
 * Follows an authorization URL in the browser until the client's loopback redirect URI is
 * reached — a listener on its port catches it, as Claude Code's or MCP Inspector's does —
 * running `steps` on the pages in between. Returns the redirect URL (with `code` or `error`).
 */
export async function authorizeInBrowser(
  page: Page,
  authorizationUrl: URL,
  redirectUri: string,
  steps: (page: Page) => Promise<void>,
): Promise<URL> {
  const listener = await loopbackListener(redirectUri);
  const landed = new Promise<URL>((resolve) => {
    listener.landed = resolve;
  });
  try {
    await page.goto(authorizationUrl.toString());
    await steps(page);
    return await Promise.race([
      landed,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`never redirected to ${redirectUri}; at ${page.url()}`)),
          15_000,
        ),
      ),
    ]);
  } finally {
    listener.landed = null;
    listener.server.closeAllConnections();
  }
}

/** The sign-in page's API-token form (organisations without an IdP). */
export async function signInWithToken(page: Page, token: string): Promise<void> {
  await page.waitForSelector('input[name="token"]');
  await page.fill('input[name="token"]', token);
  await page.click('form[action="/sign-in/token"] button[type="submit"]');
}

/** The sign-in page's email form: home-realm discovery sends the browser to the IdP. */
export async function signInWithEmail(page: Page, email: string): Promise<void> {
  await page.waitForSelector('input[name="email"]');
  await page.fill('input[name="email"]', email);
  await page.click('form[action="/sign-in/email"] button[type="submit"]');
}

/** On the consent page: approve or deny (SPEC §3a's buttons). */
export async function decide(page: Page, decision: "allow" | "deny"): Promise<void> {
  await page.waitForSelector(`button[name="decision"][value="${decision}"]`);
  await page.click(`button[name="decision"][value="${decision}"]`);
}

/**
 * The whole connector flow as a host runs it: the SDK's `auth()` discovers North, registers
 * (DCR, or CIMD when the client has a metadata URL) and sends the browser to authorize; `steps`
 * drive the pages; the code is exchanged. Returns the landing URL (code or error).
 */
export async function connect(
  serverUrl: string,
  client: TestOAuthClient,
  page: Page,
  steps: (page: Page) => Promise<void>,
): Promise<{ landed: URL; result: string | null }> {
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  const first = await auth(client, { serverUrl, scope: client.scope });
  if (first !== "REDIRECT" || !client.authorizationUrl) {
    throw new Error(`expected the SDK to start an authorization, got ${first}`);
  }
  const landed = await authorizeInBrowser(page, client.authorizationUrl, client.redirectUri, steps);
  const code = landed.searchParams.get("code");
  if (!code) return { landed, result: null };
  return { landed, result: await auth(client, { serverUrl, authorizationCode: code }) };
}

/** The status of a JSON-RPC tools/list with a bearer token: whether the token still holds. */
export async function mcpStatus(serverUrl: string, token: string): Promise<number> {
  const response = await fetch(serverUrl, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.body?.cancel();
  return response.status;
}

/** A refresh at North's token endpoint, as a host sends it. */
export function refreshAt(
  base: string,
  client: TestOAuthClient,
  refreshToken: string,
): Promise<Response> {
  return fetch(`${base}/oauth/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: client.clientInformation()?.client_id ?? "",
      resource: `${base}/mcp`,
    }),
  });
}

/**
 * A connector signed in with an API token on North's page (DCR, consent approved), or the
 * result of a refused one. `beforeConsent` runs on the consent page before Allow (an attacker's
 * move, or a read of the page); `client` reconnects a client that registered before.
 */
export async function connectWithToken(
  base: string,
  page: Page,
  token: string,
  options: { client?: TestOAuthClient; beforeConsent?: (page: Page) => Promise<void> } = {},
) {
  const client = options.client ?? new TestOAuthClient(await loopbackRedirectUri());
  let consentText = "";
  const { landed, result } = await connect(`${base}/mcp`, client, page, async (p) => {
    await signInWithToken(p, token);
    await p.waitForSelector('button[value="deny"]');
    consentText = (await p.textContent("main")) ?? "";
    await options.beforeConsent?.(p);
    await decide(p, "allow");
  });
  return { client, landed, result, consentText, tokens: client.tokens() };
}

/**
 * The preamble of the sign-in suites, once: a fresh database, the real server with North's
 * authorization server, and headless Chromium for this file, made before its tests and closed
 * after them. `db`, `server` and `browser` forward to the live objects; `newPage` opens a page
 * in a browser context of its own (no cookies shared with another test).
 */
export function useSignInSuite(options: Parameters<typeof startSignInServer>[1] = {}) {
  let db: TestDatabase | undefined;
  let server: SignInServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startSignInServer(db, options);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });
  return {
    db: forwardTo(() => db, "db"),
    server: forwardTo(() => server, "server"),
    browser: forwardTo(() => browser, "browser"),
    newPage: async (): Promise<Page> => {
      if (!browser) throw new Error("browser is used before beforeAll launched it");
      return (await browser.newContext()).newPage();
    },
  };
}
