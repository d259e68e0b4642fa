import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createOrganization, freePort } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { CLI, northJson, spawnProcess } from "./support/processes.ts";

/**
 * Issue 21, point 14: `north org sso show` printed the callback on 127.0.0.1 and the default
 * port's address while `serve` listened elsewhere, so the operator registered a redirect URI at
 * the IdP that North never sends and every sign-in failed. The URL it prints must be the one the
 * running server uses: its issuer (NORTH_PUBLIC_URL, or where it listens) plus /sign-in/callback.
 */

const SECRET_KEY = "cli-sso-redirect-secret-key-0123456789abcdefgh";
const AUDIT_KEY = randomBytes(24).toString("hex");

let db: TestDatabase;
let dir: string;
let secretFile: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), "north-sso-redirect-"));
  secretFile = path.join(dir, "client-secret");
  await writeFile(secretFile, "idp-secret\n", { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

/** The issuer of a real `north serve` started with `env` (no --port: the environment decides). */
async function servedIssuer(env: Record<string, string>): Promise<string> {
  const server = spawnProcess("bun", [CLI, "serve"], {
    DATABASE_APP_URL: db.appUrl,
    NORTH_AUDIT_KEY: AUDIT_KEY,
    NORTH_SECRET_KEY: SECRET_KEY,
    NORTH_PURGE_INTERVAL_S: "0",
    LOG_LEVEL: "info",
    ...env,
  });
  try {
    const url = (await server.waitFor(/"url":"(http:[^"]+)"/))[1] ?? "";
    const metadata = await fetch(url.replace(/\/mcp$/, "/.well-known/oauth-authorization-server"));
    return ((await metadata.json()) as { issuer: string }).issuer;
  } finally {
    await server.interrupt();
  }
}

describe("north org sso show", () => {
  it.each([
    ["a configured host and port", { NORTH_HOST: "localhost" }],
    ["a configured public URL", { NORTH_PUBLIC_URL: "https://north.firm.example/" }],
  ])("names the callback the running server uses, with %s", async (_label, vars) => {
    const env = { ...vars, NORTH_PORT: String(await freePort()) };
    const org = await createOrganization(db.owner.db, { name: `SSO ${_label}` });
    const cli = { DATABASE_URL: db.ownerUrl, NORTH_SECRET_KEY: SECRET_KEY, ...env };
    await northJson(
      [
        "org",
        "sso",
        "set",
        "--org",
        org.id,
        "--issuer",
        "https://login.firm.example/tenant/v2.0",
        "--client-id",
        "north-client",
        "--client-secret-file",
        secretFile,
        "--domain",
        `${org.id.slice(0, 8)}.example`,
      ],
      cli,
    );
    const shown = await northJson<{ redirect_uri: string }>(
      ["org", "sso", "show", "--org", org.id],
      cli,
    );
    expect(shown.redirect_uri).toBe(`${await servedIssuer(env)}/sign-in/callback`);
  });
});
