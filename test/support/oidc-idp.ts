import { spawn } from "node:child_process";
import path from "node:path";
import type { Page } from "playwright-core";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCRIPT = path.join(ROOT, "test/support/oidc-idp-process.mjs");
/** Generous: under the whole suite on two cores, Node loading oidc-provider once took over 20 s. */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;

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
 * `openid email profile`, `email` and `email_verified` in the ID token, client_secret_basic and
 * client_secret_post. Its only page is a login form; consent is automatic.
 *
 * The child's stdin is a pipe kept open for its lifetime: if the test process dies, the pipe
 * closes and the IdP exits by itself.
 */
export async function startTestIdp(config: TestIdpConfig): Promise<TestIdp> {
  const child = spawn("node", [SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, IDP_CONFIG: JSON.stringify({ port: 0, ...config }) },
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

  const issuer = await new Promise<string>((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`test IdP did not start: ${reason}\nstderr:\n${stderr}`));
    };
    const timer = setTimeout(
      () => fail(`no READY line within ${READY_TIMEOUT_MS} ms`),
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
        resolve((JSON.parse(line[1]) as { issuer: string }).issuer);
      } catch {
        fail(`unreadable READY line: ${line[0]}`);
      }
    });
  });

  let stopping: Promise<void> | undefined;
  return {
    issuer,
    stop() {
      stopping ??= (async () => {
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
