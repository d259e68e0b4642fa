import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  authorizationServerTables as ast,
  createFingerprinter,
  ensureAuthorizationServerUser,
} from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { north, northJson } from "./support/processes.ts";

/** The sign-in operator commands of SPEC §3a, run as real `north` processes. */

const SECRET_KEY = "cli-sign-in-secret-key-0123456789abcdefghijkl";
const AUDIT_KEY = "cli-sign-in-audit-key-0123456789";
const CLIENT_SECRET = `idp-secret-${randomBytes(12).toString("hex")}`;
const NIL = "00000000-0000-0000-0000-000000000000";

let db: TestDatabase;
let env: Record<string, string>;
let dir: string;
let secretFile: string;
const orgs = { a: "", b: "", c: "" };
const users = { first: "", second: "" };

const sso = (org: string, ...domains: string[]) => [
  "org",
  "sso",
  "set",
  "--org",
  org,
  "--issuer",
  "https://login.firm.example/tenant/v2.0",
  "--client-id",
  "north-client",
  "--client-secret-file",
  secretFile,
  ...domains.flatMap((d) => ["--domain", d]),
];

const stored = async (org: string) =>
  db.owner.client<{ issuer: string; client_id: string; client_secret_encrypted: string }[]>`
    select issuer, client_id, client_secret_encrypted from sso_connections
    where organization_id = ${org}`;

const domainsOf = async (org: string) =>
  (
    await db.owner.client<{ domain: string }[]>`
      select domain from sso_domains where organization_id = ${org} order by domain`
  ).map((r) => r.domain);

const without = (vars: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(vars).filter(([key]) => key !== name));

/** Expects a refusal: non-zero, nothing on stdout, one line on stderr matching `message`. */
function expectRefusal(result: { code: number; stdout: string; stderr: string }, message: RegExp) {
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trim().split("\n")).toHaveLength(1);
  expect(result.stderr).not.toContain(CLIENT_SECRET);
}

beforeAll(async () => {
  db = await createTestDatabase();
  env = {
    DATABASE_URL: db.ownerUrl,
    NORTH_SECRET_KEY: SECRET_KEY,
    NORTH_AUDIT_KEY: AUDIT_KEY,
    NORTH_PUBLIC_URL: "https://north.firm.example/",
  };
  dir = await mkdtemp(path.join(tmpdir(), "north-cli-sign-in-"));
  secretFile = path.join(dir, "client-secret");
  await writeFile(secretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
  for (const key of ["a", "b", "c"] as const) {
    orgs[key] = (await northJson<{ id: string }>(["org", "create", `Firm ${key}`], env)).id;
  }
  users.first = (
    await northJson<{ userId: string }>(
      ["member", "add", "--org", orgs.a, "--email", "first@firm.example"],
      env,
    )
  ).userId;
  users.second = (
    await northJson<{ userId: string }>(
      ["member", "add", "--org", orgs.a, "--email", "second@firm.example"],
      env,
    )
  ).userId;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe("north org sso", () => {
  it("sets an IdP, shows it without the secret, and stores the secret only encrypted", async () => {
    const set = await north(
      [...sso(orgs.a, "Firm.Example", "firm.example", "avocats.example")],
      env,
    );
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("https://north.firm.example/sign-in/callback");
    const expected = {
      issuer: "https://login.firm.example/tenant/v2.0",
      client_id: "north-client",
      domains: ["avocats.example", "firm.example"],
      redirect_uri: "https://north.firm.example/sign-in/callback",
    };
    const shown = await north(["org", "sso", "show", "--org", orgs.a, "--json"], env);
    expect(JSON.parse(shown.stdout)).toStrictEqual(expected);
    const human = await north(["org", "sso", "show", "--org", orgs.a], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("avocats.example, firm.example");
    for (const output of [set, shown, human]) {
      expect(output.stdout + output.stderr).not.toContain(CLIENT_SECRET);
    }

    const [row] = await stored(orgs.a);
    expect(row?.client_secret_encrypted).toBeDefined();
    expect(row?.client_secret_encrypted).not.toContain(CLIENT_SECRET);
    // The trailing newline of the file is not part of the secret.
    expect(await createSecretBox(SECRET_KEY).decrypt(row?.client_secret_encrypted ?? "")).toBe(
      CLIENT_SECRET,
    );
  });

  it("prints the same shape with --json on set, and a second set replaces the domains", async () => {
    const result = await northJson(
      sso(orgs.a, "New.example", "firm.example"),
      without(env, "NORTH_PUBLIC_URL"),
    );
    expect(result).toStrictEqual({
      issuer: "https://login.firm.example/tenant/v2.0",
      client_id: "north-client",
      domains: ["firm.example", "new.example"],
      redirect_uri: "http://127.0.0.1:7410/sign-in/callback",
    });
    expect(await domainsOf(orgs.a)).toEqual(["firm.example", "new.example"]);
  });

  it("accepts plain http only for an IdP on a loopback address", async () => {
    const args = sso(orgs.c, "loopback.example");
    args[6] = "http://127.0.0.1:9999/idp";
    const result = await northJson<{ issuer: string }>(args, env);
    expect(result.issuer).toBe("http://127.0.0.1:9999/idp");
    await northJson(["org", "sso", "remove", "--org", orgs.c], env);
  });

  it("refuses a domain that belongs to another organisation and changes nothing", async () => {
    const before = await stored(orgs.a);
    const result = await north([...sso(orgs.b, "other.example", "firm.example"), "--json"], env);
    expectRefusal(result, /firm\.example already belongs to another organization/);
    expect(await stored(orgs.b)).toEqual([]);
    expect(await domainsOf(orgs.b)).toEqual([]);
    expect(await stored(orgs.a)).toEqual(before);
    expect(await domainsOf(orgs.a)).toEqual(["firm.example", "new.example"]);
  });

  it.each([
    [
      "an http issuer off loopback",
      { issuer: "http://login.firm.example" },
      /--issuer must use https/,
    ],
    [
      "an issuer that is not a URL",
      { issuer: "login.firm.example" },
      /--issuer must be an absolute URL/,
    ],
    ["an issuer with a query", { issuer: "https://login.firm.example/?x=1" }, /query or fragment/],
    ["no --issuer", { issuer: null }, /--issuer is required/],
    ["no --client-id", { "client-id": null }, /--client-id is required/],
    [
      "a client id over 500 characters",
      { "client-id": "x".repeat(501) },
      /--client-id is at most 500/,
    ],
    [
      "a missing secret file",
      { "client-secret-file": "/nonexistent/secret" },
      /--client-secret-file .* does not exist/,
    ],
    ["an empty secret file", { "client-secret-file": "EMPTY" }, /--client-secret-file .* is empty/],
    ["no --client-secret-file", { "client-secret-file": null }, /--client-secret-file is required/],
    ["no --domain", { domain: null }, /--domain is required/],
    ["a bad domain", { domain: "not a domain" }, /--domain "not a domain" is not a domain name/],
    ["a single-label domain", { domain: "localhost" }, /--domain "localhost" is not a domain name/],
    ["an unknown organisation", { org: NIL }, /no such organization/],
    ["a malformed --org", { org: "firm" }, /--org must be a uuid/],
  ] as const)("refuses %s in one line and stores nothing", async (_name, change, message) => {
    const values: Record<string, string | null> = {
      org: orgs.c,
      issuer: "https://login.firm.example",
      "client-id": "north-client",
      "client-secret-file": secretFile,
      domain: "refused.example",
      ...change,
    };
    if (values["client-secret-file"] === "EMPTY") {
      values["client-secret-file"] = path.join(dir, "empty");
      await writeFile(values["client-secret-file"], "\n");
    }
    const args = ["org", "sso", "set"];
    for (const [flag, value] of Object.entries(values)) {
      if (value !== null) args.push(`--${flag}`, value);
    }
    const before = [await stored(orgs.c), await domainsOf(orgs.c)];
    expectRefusal(await north([...args, "--json"], env), message);
    expect([await stored(orgs.c), await domainsOf(orgs.c)]).toEqual(before);
  });

  it("refuses without NORTH_SECRET_KEY when DATABASE_URL is set", async () => {
    const before = await stored(orgs.c);
    expectRefusal(
      await north([...sso(orgs.c, "keyless.example"), "--json"], without(env, "NORTH_SECRET_KEY")),
      /^north: NORTH_SECRET_KEY is not set: /,
    );
    expect(await stored(orgs.c)).toEqual(before);
    expect(await domainsOf(orgs.c)).not.toContain("keyless.example");
  });

  it("removes an IdP, freeing its domains; show and a second remove then fail", async () => {
    await northJson(sso(orgs.b, "leaving.example"), env);
    expect(await northJson(["org", "sso", "remove", "--org", orgs.b], env)).toStrictEqual({
      removed: true,
    });
    expect(await stored(orgs.b)).toEqual([]);
    expect(await domainsOf(orgs.b)).toEqual([]);
    expectRefusal(
      await north(["org", "sso", "show", "--org", orgs.b, "--json"], env),
      new RegExp(`organisation ${orgs.b} has no SSO configured`),
    );
    expectRefusal(
      await north(["org", "sso", "remove", "--org", orgs.b, "--json"], env),
      /has no SSO configured/,
    );
    expectRefusal(
      await north(["org", "sso", "show", "--org", NIL, "--json"], env),
      /no such organization/,
    );
    // The domain is free again for another organisation.
    await northJson(sso(orgs.c, "leaving.example"), env);
    await northJson(["org", "sso", "remove", "--org", orgs.c], env);
  });
});

/** A grant as the authorization server leaves it: user, client, consent and a refresh token. */
async function seedGrant(userId: string, clientName: string, createdAt: Date) {
  const clientId = `client-${randomBytes(6).toString("hex")}`;
  await ensureAuthorizationServerUser(db.owner.db, userId);
  await db.owner.db.insert(ast.oauthClient).values({
    id: randomUUID(),
    clientId,
    name: clientName,
    redirectUris: ["http://127.0.0.1:33418/callback"],
    createdAt,
  });
  const id = randomUUID();
  await db.owner.db.insert(ast.oauthConsent).values({
    id,
    clientId,
    userId,
    scopes: ["profile:write", "memory:read"],
    createdAt,
    updatedAt: createdAt,
  });
  const refreshId = randomUUID();
  await db.owner.db.insert(ast.oauthRefreshToken).values({
    id: refreshId,
    token: randomBytes(32).toString("base64url"),
    clientId,
    userId,
    scopes: ["profile:write", "memory:read"],
    createdAt,
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  return { id, clientId, refreshId };
}

describe("north grant", () => {
  const grants: Record<string, Awaited<ReturnType<typeof seedGrant>>> = {};

  beforeAll(async () => {
    grants.claude = await seedGrant(users.first, "Claude", new Date("2025-03-01T10:00:00Z"));
    grants.inspector = await seedGrant(
      users.first,
      "MCP Inspector",
      new Date("2025-03-02T10:00:00Z"),
    );
    grants.second = await seedGrant(users.second, "Claude", new Date("2025-03-03T10:00:00Z"));
  });

  it("lists an organisation's grants, newest first, in the documented shape", async () => {
    const listed = await northJson<unknown[]>(["grant", "list", "--org", orgs.a], env);
    expect(listed).toStrictEqual([
      {
        id: grants.second?.id,
        user_id: users.second,
        client_name: "Claude",
        scopes: ["profile:write", "memory:read"],
        created_at: "2025-03-03T10:00:00.000Z",
      },
      {
        id: grants.inspector?.id,
        user_id: users.first,
        client_name: "MCP Inspector",
        scopes: ["profile:write", "memory:read"],
        created_at: "2025-03-02T10:00:00.000Z",
      },
      {
        id: grants.claude?.id,
        user_id: users.first,
        client_name: "Claude",
        scopes: ["profile:write", "memory:read"],
        created_at: "2025-03-01T10:00:00.000Z",
      },
    ]);
    const human = await north(["grant", "list", "--org", orgs.a], env);
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split("\n")).toHaveLength(3);
    expect(human.stdout).toContain(`${grants.claude?.id}  first@firm.example  Claude`);
    expect(await northJson(["grant", "list", "--org", orgs.b], env)).toEqual([]);
  });

  it("filters by --user", async () => {
    const listed = await northJson<{ id: string }[]>(
      ["grant", "list", "--org", orgs.a, "--user", users.second],
      env,
    );
    expect(listed.map((g) => g.id)).toEqual([grants.second?.id]);
  });

  it.each([
    [["grant", "list"], /--org is required/],
    [["grant", "list", "--org", "firm"], /--org must be a uuid/],
    [["grant", "list", "--org", NIL], /no such organization/],
    [["grant", "list", "--org", "ORG", "--user", "someone"], /--user must be a uuid/],
    [["grant", "list", "--org", "ORG", "--user", NIL], /not a member of that organization/],
    [["grant", "revoke"], /GRANT_ID is required/],
    [["grant", "revoke", "nope"], /GRANT_ID must be a uuid/],
    [["grant", "revoke", NIL], /no such grant/],
    [["grant", "revoke", "ID", "--org", "ORG"], /grant revoke does not take --org/],
  ])("refuses %j in one line", async (args, message) => {
    const resolved = args.map((a) =>
      a === "ORG" ? orgs.a : a === "ID" ? (grants.claude?.id ?? "") : a,
    );
    expectRefusal(await north([...resolved, "--json"], env), message);
  });

  it("refuses to revoke without NORTH_AUDIT_KEY when DATABASE_URL is set, leaving the grant", async () => {
    expectRefusal(
      await north(
        ["grant", "revoke", grants.claude?.id ?? "", "--json"],
        without(env, "NORTH_AUDIT_KEY"),
      ),
      /NORTH_AUDIT_KEY/,
    );
    const consent = await db.owner.client`
      select id from north_auth.oauth_consent where id = ${grants.claude?.id ?? ""}`;
    expect(consent).toHaveLength(1);
  });

  it("revokes a grant: consent gone, refresh tokens revoked, audited with reason operator", async () => {
    const grant = grants.claude;
    if (!grant) throw new Error("no seeded grant");
    const result = await northJson(["grant", "revoke", grant.id], env);
    expect(result).toStrictEqual({ id: grant.id, revoked: true });

    expect(
      await db.owner.client`select id from north_auth.oauth_consent where id = ${grant.id}`,
    ).toHaveLength(0);
    const [refresh] = await db.owner.client<{ revoked: boolean }[]>`
      select revoked is not null as revoked from north_auth.oauth_refresh_token
      where id = ${grant.refreshId}`;
    expect(refresh?.revoked).toBe(true);
    const audit = await db.owner.client`
      select organization_id, actor_id, tool, outcome, reason, target_fingerprint
      from audit_events where tool = 'grant_revoke'`;
    expect(audit).toEqual([
      {
        organization_id: orgs.a,
        actor_id: users.first,
        tool: "grant_revoke",
        outcome: "revoked",
        reason: "operator",
        target_fingerprint: createFingerprinter(AUDIT_KEY)(grant.clientId).fingerprint,
      },
    ]);

    // The member's other grants stay.
    const left = await northJson<{ id: string }[]>(["grant", "list", "--org", orgs.a], env);
    expect(left.map((g) => g.id)).toEqual([grants.second?.id, grants.inspector?.id]);
    expectRefusal(await north(["grant", "revoke", grant.id, "--json"], env), /no such grant/);
  });
});
