import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Page } from "playwright-core";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCRIPT = path.join(ROOT, "test/support/oidc-idp-process.mjs");
/** Per start: a healthy start takes seconds, even under the whole suite on two cores. */
const READY_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 5_000;
/** Starts of one IdP before giving up (see the re-spawn in {@link startTestIdp}). */
const START_ATTEMPTS = 2;

export interface TestIdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface TestIdpAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
}

export interface TestIdpConfig {
  clients: TestIdpClient[];
  accounts: TestIdpAccount[];
  /**
   * `true`: email, email_verified and name in the ID token as well (Google's way). Default:
   * oidc-provider's own behaviour — with the code flow the ID token is "thin" (no email claims)
   * and they are only at the userinfo endpoint, as Okta does.
   */
  idTokenClaims?: boolean;
}

export interface TestIdpOptions {
  /**
   * Puts a forwarding proxy in front of the IdP (which then names the proxy as its issuer) that
   * passes everything through as it is, except the userinfo endpoint's JSON answer, which this
   * rewrites: an IdP answering userinfo for another subject, which oidc-provider never does. A
   * `null` drops the connection instead (the userinfo endpoint unreachable).
   */
  rewriteUserinfo?: (claims: Record<string, unknown>) => Record<string, unknown> | null;
}

export interface TestIdp {
  /** `http://127.0.0.1:PORT`; discovery is at `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  /** SIGTERM, then waits for the process to exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider, under Node, not Bun) on a random loopback port:
 * the firm's identity provider in end-to-end tests. Code flow with PKCE (S256), scopes
 * `openid email profile`, `email` and `email_verified` at the userinfo endpoint (and in the ID
 * token with `idTokenClaims`), client_secret_basic and client_secret_post. Its only page is a
 * login form; consent is automatic.
 *
 * The child's stdin is a pipe kept open for its lifetime: if the test process dies, the pipe
 * closes and the IdP exits by itself.
 */
export async function startTestIdp(
  config: TestIdpConfig,
  options: TestIdpOptions = {},
): Promise<TestIdp> {
  const proxy = options.rewriteUserinfo ? await startUserinfoProxy(options.rewriteUserinfo) : null;
  const processConfig = { port: 0, ...config, ...(proxy ? { issuer: proxy.url } : {}) };
  // One re-spawn when no READY line comes: under the whole suite a start has (rarely) hung
  // after Node printed its first warning, for reasons not found yet: the start is tried again once.
  let started: Awaited<ReturnType<typeof spawnIdp>> | undefined;
  for (let attempt = 1; !started; attempt += 1) {
    try {
      started = await spawnIdp(processConfig);
    } catch (error) {
      if (attempt >= START_ATTEMPTS || !(error instanceof IdpNotReady)) {
        await proxy?.close();
        throw error;
      }
      process.stderr.write(
        `test IdP: ${(error as Error).message.split("\n")[0]}; starting again\n`,
      );
    }
  }
  const { child, ready, exited } = started;

  const { issuer } = ready;
  if (proxy) await proxy.forwardTo(ready.port);

  let stopping: Promise<void> | undefined;
  return {
    issuer,
    stop() {
      stopping ??= (async () => {
        await proxy?.close();
        if (child.exitCode !== null || child.signalCode !== null) return;
        const killer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
        child.kill("SIGTERM");
        await exited;
        clearTimeout(killer);
        child.stdin.destroy();
      })();
      return stopping;
    },
  };
}

/**
 * The proxy of {@link TestIdpOptions.rewriteUserinfo}, on a random loopback port: forwards every
 * request to the IdP's port (the Host header kept, so the IdP sees its issuer's), and rewrites the
 * JSON body of the answers from the userinfo endpoint its discovery document names.
 */
async function startUserinfoProxy(rewrite: NonNullable<TestIdpOptions["rewriteUserinfo"]>) {
  let targetPort = 0;
  let userinfoPath = "";
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: "127.0.0.1",
        port: targetPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, "accept-encoding": "identity" },
      },
      (answer) => {
        const path = new URL(req.url ?? "/", "http://proxy").pathname;
        if (path !== userinfoPath || answer.statusCode !== 200) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const rewritten = rewrite(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          if (rewritten === null) {
            res.destroy();
            return;
          }
          const body = JSON.stringify(rewritten);
          const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
          res.writeHead(200, headers).end(body);
        });
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async forwardTo(port: number) {
      targetPort = port;
      const discovery = await fetch(`${url}/.well-known/openid-configuration`);
      const { userinfo_endpoint } = (await discovery.json()) as { userinfo_endpoint: string };
      userinfoPath = new URL(userinfo_endpoint).pathname;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * On the test IdP's login form (the page must be showing it), signs in as `login` (an account's
 * email or sub) and waits until the browser has left the IdP, i.e. landed on the client's
 * redirect URI (after the automatic consent). Throws with the IdP's message if it rejects the login.
 */
export async function signInAtTestIdp(page: Page, login: string): Promise<void> {
  const idpOrigin = new URL(page.url()).origin;
  await page.fill('input[name="login"]', login);
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => r.request().method() === "POST" && new URL(r.url()).origin === idpOrigin,
    ),
    page.click('button[type="submit"]'),
  ]);
  if (response.status() !== 303) {
    await page.waitForLoadState("load");
    const alert = page.locator('[role="alert"]');
    const message =
      (await alert.count()) > 0 ? await alert.textContent() : `HTTP ${response.status()}`;
    throw new Error(`the test IdP rejected login ${JSON.stringify(login)}: ${message}`);
  }
  await page.waitForURL((url) => url.origin !== idpOrigin, { waitUntil: "load" });
}

/** No READY line in time: the process was started but never said it listens. */
class IdpNotReady extends Error {}

/** Spawns the IdP process and waits for its READY line (the child's output always drained). */
async function spawnIdp(processConfig: Record<string, unknown>) {
  const child = spawn("node", [SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, IDP_CONFIG: JSON.stringify(processConfig) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    // Keep draining so the child never blocks on a full pipe; keep only the tail for errors.
    stderr = (stderr + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // An EPIPE on the kept-open stdin after the child is gone is not an error worth surfacing.
  child.stdin.on("error", () => {});

  const ready = await new Promise<{ issuer: string; port: number }>((resolve, reject) => {
    const fail = (reason: string, notReady = false) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      const message = `test IdP did not start: ${reason}\nstderr:\n${stderr}`;
      reject(notReady ? new IdpNotReady(message) : new Error(message));
    };
    const timer = setTimeout(
      () => fail(`no READY line within ${READY_TIMEOUT_MS} ms`, true),
      READY_TIMEOUT_MS,
    );
    const exitedEarly = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(`exited early (code ${code}, signal ${signal})`);
    child.once("error", (error) => fail(`spawn failed: ${error.message}`));
    child.once("exit", exitedEarly);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
      const line = /^READY (.+)$/m.exec(stdout);
      if (!line?.[1]) return;
      child.off("exit", exitedEarly);
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line[1]) as { issuer: string; port: number });
      } catch {
        fail(`unreadable READY line: ${line[0]}`);
      }
    });
  });
  return { child, ready, exited };
}
