import {
  buildMcpApp,
  createAuthResolver,
  createRateLimiter,
  type HttpServerHandle,
  startHttpServer,
} from "@north/mcp-server";
import { type AdminAppDeps, buildAdminApp } from "@north/web";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { expect } from "vitest";
import type { TestDatabase } from "./database.ts";
import { capturingLogger } from "./logs.ts";
import { TEST_AUDIT_KEY } from "./mcp.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface TestConsole {
  /** `http://127.0.0.1:PORT`; the console is at `${base}/admin`. */
  base: string;
  /** Every log line the server wrote, as text. */
  logs: string[];
  close(): Promise<void>;
}

/**
 * The real server (transport guard, body limit, real token resolver) with the console mounted,
 * listening on a random loopback port, on the suite's database and app login role.
 */
export async function startTestConsole(
  db: TestDatabase,
  options: Pick<AdminAppDeps, "publicUrl" | "sessionTimeouts"> = {},
): Promise<TestConsole> {
  const { logger, logs } = capturingLogger();
  const app = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db),
    limiter: createRateLimiter({
      writesPerMinute: 1_000,
      readsPerMinute: 1_000,
      protocolRequestsPerMinute: 1_000,
    }),
    logger,
    auditKey: TEST_AUDIT_KEY,
    admin: buildAdminApp({ db: db.app.db, auditKey: TEST_AUDIT_KEY, logger, ...options }),
  });
  const server: HttpServerHandle = await startHttpServer(app.fetch, {
    port: 0,
    hostname: "127.0.0.1",
  });
  return { base: `http://127.0.0.1:${server.port}`, logs, close: () => server.close() };
}

/** Debian's Chromium, headless, through playwright-core (no browser download). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * Clicks `target` and waits until the page it opens has loaded, its stylesheet too. The wait is
 * for the next `load` event, registered before the click: waiting for the load *state* instead
 * returns at once, on the page still shown, and a check made then measures the old page or the
 * new one unstyled. The page shown must have loaded first (a `waitForSelector` can return before
 * its stylesheet has), or its own `load` would be taken for the next page's.
 */
export async function follow(page: Page, target: string | Locator): Promise<void> {
  await page.waitForLoadState("load");
  const loaded = page.waitForEvent("load");
  await Promise.all([loaded, typeof target === "string" ? page.click(target) : target.click()]);
}

/**
 * A fresh browser context (at `viewport`, or Playwright's default) signed in to the console with
 * `token`, on the page sign-in lands on.
 */
export async function signedIn(
  browser: Browser,
  base: string,
  token: string,
  viewport?: { width: number; height: number },
): Promise<Page> {
  const page = await (await browser.newContext(viewport ? { viewport } : {})).newPage();
  await page.goto(`${base}/admin/profiles`);
  expect(page.url()).toBe(`${base}/admin/login`);
  await page.fill('input[name="token"]', token);
  await follow(page, 'form[action="/admin/login"] button[type="submit"]');
  return page;
}
