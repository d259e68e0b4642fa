import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { loginUrl } from "../support/pg-urls.ts";
import { north } from "../support/processes.ts";

/**
 * Finding 11: `serve` ran happily on a superuser URL, silently bypassing row-level security.
 * The attack is an operator mistake: pointing DATABASE_APP_URL at a role that skips policies.
 */

let db: TestDatabase;
const suffix = randomBytes(3).toString("hex");
const bypass = `north_bypass_${suffix}`;
const owner = `north_owner_${suffix}`;
const password = randomBytes(12).toString("hex");

beforeAll(async () => {
  db = await createTestDatabase();
  await db.owner.client.unsafe(`CREATE ROLE ${bypass} LOGIN BYPASSRLS PASSWORD '${password}'`);
  await db.owner.client.unsafe(`CREATE ROLE ${owner} LOGIN PASSWORD '${password}'`);
  await db.owner.client.unsafe(`CREATE TABLE ${owner}_table (id int)`);
  await db.owner.client.unsafe(`ALTER TABLE ${owner}_table OWNER TO ${owner}`);
});
afterAll(async () => {
  await db.drop();
  for (const role of [bypass, owner])
    await db.owner.client.unsafe(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
});

const serve = (url: string) =>
  north(["serve", "--port", "0"], {
    DATABASE_APP_URL: url,
    NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
    NORTH_SECRET_KEY: randomBytes(32).toString("base64url"),
  });

describe("serve refuses a runtime role that row-level security would not bind", () => {
  it("refuses a superuser", async () => {
    const result = await serve(db.ownerUrl);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(/^north: refusing to serve: .* is a superuser/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  }, 60_000);

  it("refuses a BYPASSRLS role", async () => {
    const result = await serve(loginUrl(db.ownerUrl, bypass, password));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/has BYPASSRLS/);
  }, 60_000);

  it("refuses a role that owns tables", async () => {
    const result = await serve(loginUrl(db.ownerUrl, owner, password));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/owns 1 relations/);
  }, 60_000);
});
