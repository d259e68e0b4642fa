import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { addMember, freePort } from "@north/db";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./support/console.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { type FirmIdp, startFirmIdp } from "./support/firm-idp.ts";
import { registerClient } from "./support/oauth-requests.ts";
import { signInAtTestIdp } from "./support/oidc-idp.ts";
import {
  type CimdHost,
  decide,
  type SignInServer,
  signInWithEmail,
  startCimdHost,
  startSignInServer,
} from "./support/sign-in.ts";

/**
 * The official conformance suite's authorization-server scenarios
 * (@modelcontextprotocol/conformance 0.2.0-alpha.12, `conformance authorization`, run with Bun)
 * against North's own authorization server, issuer on loopback, the firm's IdP behind it:
 *
 * - `authorization-server-metadata-endpoint`: RFC 8414 metadata at the issuer's well-known URL
 *   (issuer, endpoints, `code` and S256, and `client_id_metadata_document_supported`);
 * - `authorization-code-grant`: code + PKCE S256 with `resource`, for a client id the runner is
 *   given, through a browser step: the runner prints the authorization URL and waits for the
 *   redirect to its own listener on `http://127.0.0.1:<port>/callback`. Here Chromium follows
 *   that URL through North's email form, the firm's IdP and consent, as a person would; the
 *   runner then exchanges the code and checks the redirect (state, iss) and the token answer.
 *
 * Once for each way a client is known to North: a metadata document (the 2026-07-28 way) and
 * Dynamic Client Registration (deprecated there, still what claude.ai's connectors use). The
 * runner's `authorization` command has no `--expected-failures`, so this file applies the same
 * rule as the server command's baseline to the checks it saves (`-o`): every FAILURE or WARNING
 * must be listed in test/conformance/expected-failures-authorization.yml (a scenario, or
 * `scenario:check-id`), and a listed one that passes fails the run too.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const RUNNER = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const BASELINE = path.join(ROOT, "test/conformance/expected-failures-authorization.yml");
const MEMBER = "avocate@firm.example";
const SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"];

let db: TestDatabase;
let cimd: CimdHost;
let server: SignInServer;
let firm: FirmIdp;
let browser: Browser;

beforeAll(async () => {
  db = await createTestDatabase();
  cimd = await startCimdHost();
  server = await startSignInServer(db, { cimd });
  firm = await startFirmIdp(db, server, {
    name: "Cabinet Conformité",
    domains: ["firm.example"],
    accounts: [{ sub: "idp-member", email: MEMBER, email_verified: true, name: "Avocate" }],
  });
  await addMember(db.owner.db, { organizationId: firm.organizationId, email: MEMBER });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await firm?.idp.stop();
  await server?.close();
  await cimd?.close();
  await db?.drop();
});

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** The client id the runner is given, known to North the way `kind` says. */
async function clientFor(kind: string, redirectUri: string): Promise<string> {
  if (kind === "a client registered by DCR") {
    return (await registerClient(server.base, "Conformance runner", redirectUri)).clientId;
  }
  const clientId = cimd.serve("conformance-runner", {});
  cimd.serve("conformance-runner", {
    client_id: clientId,
    client_name: "Conformance runner",
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    response_types: ["code"],
  });
  return clientId;
}

/**
 * Runs every authorization-server scenario; when the runner prints its authorization URL, the
 * browser signs the member in at the firm's IdP and allows. Returns the saved checks by scenario.
 */
async function runScenarios(clientId: string, port: number) {
  const outputDir = await mkdtemp(path.join(tmpdir(), "north-as-conformance-"));
  const args = [
    RUNNER,
    "authorization",
    ...["--url", server.base, "--client-id", clientId, "--resource", server.mcpUrl],
    ...["--port", String(port), "-o", outputDir],
  ];
  const child = spawn("bun", args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let output = "";
  let browserStep: Promise<void> | undefined;
  let browserError: unknown = null;
  const authorizeUrl = `${server.base}/oauth/oauth2/authorize?`;
  const onData = (chunk: Buffer) => {
    output += chunk;
    // Only whole lines: a chunk may end inside the URL.
    const line = output
      .split("\n")
      .slice(0, -1)
      .find((l) => l.startsWith(authorizeUrl));
    if (!line || browserStep) return;
    // A failed browser step ends the run: the runner would wait five minutes for its callback.
    browserStep = signInAndAllow(line, port).catch((e: unknown) => {
      browserError = e;
      child.kill();
    });
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  // Never past the test's own timeout: a hung runner would outlive the file.
  const deadline = setTimeout(() => child.kill(), 50_000);
  await exited;
  clearTimeout(deadline);
  await browserStep;
  try {
    const checks = new Map<string, Check[]>();
    const saved = await readdir(outputDir);
    for (const scenario of SCENARIOS) {
      // The runner names each directory `authorization-server-<scenario>-<timestamp>`.
      const dir = saved.find((d) => d.startsWith(`authorization-server-${scenario}-`));
      if (!dir) continue;
      const file = path.join(outputDir, dir, "checks.json");
      checks.set(scenario, JSON.parse(await readFile(file, "utf8")) as Check[]);
    }
    return { output, checks, browserError };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

/** The person's part: North's email form, the firm's IdP, consent, Allow; lands on the runner. */
async function signInAndAllow(authorizationUrl: string, port: number): Promise<void> {
  const page = await (await browser.newContext()).newPage();
  try {
    await page.goto(authorizationUrl);
    await signInWithEmail(page, MEMBER);
    await page.waitForSelector('input[name="login"]');
    await signInAtTestIdp(page, MEMBER);
    await decide(page, "allow");
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${port}`);
  } finally {
    await page.context().close();
  }
}

/** The baseline's entries: `scenario` or `scenario:check-id`, one per `  - ` line. */
async function readBaseline(): Promise<string[]> {
  const entries: string[] = [];
  for (const raw of (await readFile(BASELINE, "utf8")).split("\n")) {
    const line = raw.replace(/#.*/, "").trimEnd();
    if (line === "" || line === "authorization:") continue;
    const entry = line.match(/^ {2}- ([\w:-]+)$/)?.[1];
    if (!entry) throw new Error(`unreadable line in ${BASELINE}: ${raw}`);
    entries.push(entry);
  }
  return entries;
}

/**
 * The server command's baseline rule: a scenario entry expects some check of it to fail or warn;
 * a `scenario:check-id` entry expects that check to. Returns what is failing unlisted and what is
 * listed but passing.
 */
function compareWithBaseline(checks: Map<string, Check[]>, baseline: string[]) {
  const failing = (c: Check) => c.status === "FAILURE" || c.status === "WARNING";
  const unexpected: string[] = [];
  const stale: string[] = [];
  for (const [scenario, list] of checks) {
    if (baseline.includes(scenario)) {
      if (!list.some(failing)) stale.push(scenario);
      continue;
    }
    for (const check of list.filter(failing)) {
      const entry = `${scenario}:${check.id}`;
      if (!baseline.includes(entry)) unexpected.push(`${entry} (${check.errorMessage ?? ""})`);
    }
    for (const entry of baseline.filter((e) => e.startsWith(`${scenario}:`))) {
      const check = list.find((c) => `${scenario}:${c.id}` === entry);
      if (check?.status === "SUCCESS") stale.push(entry);
    }
  }
  // An entry naming no scenario that ran (a typo, a scenario the suite dropped) is stale too.
  stale.push(...baseline.filter((e) => !checks.has(e.split(":")[0] ?? "")));
  return { unexpected, stale };
}

describe("MCP authorization-server conformance", () => {
  it.each(["a client metadata document", "a client registered by DCR"])(
    "passes every authorization-server scenario that applies to North, for %s",
    async (kind) => {
      const port = await freePort();
      const clientId = await clientFor(kind, `http://127.0.0.1:${port}/callback`);
      const run = await runScenarios(clientId, port);
      expect(run.browserError, run.output).toBeNull();
      // Both scenarios ran and saved their checks (the runner's exit code counts listed failures).
      expect([...run.checks.keys()], run.output).toEqual(SCENARIOS);
      const { unexpected, stale } = compareWithBaseline(run.checks, await readBaseline());
      expect({ unexpected, stale }, run.output).toEqual({ unexpected: [], stale: [] });
      // The code grant itself ran to a token, not skipped.
      const grant = run.checks.get("authorization-code-grant") ?? [];
      expect(
        grant.map((c) => c.status),
        run.output,
      ).toEqual(["SUCCESS"]);
    },
    60_000,
  );
});
