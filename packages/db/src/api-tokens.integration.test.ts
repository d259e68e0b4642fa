import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import {
  createApiToken,
  hashToken,
  listApiTokens,
  resolveApiToken,
  revokeApiToken,
} from "./api-tokens.ts";

let db: TestDatabase;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(() => db.drop());

const mint = (overrides: { expiresAt?: Date | null; scopes?: string[] } = {}) =>
  createApiToken(db.owner.db, {
    organizationId: ws.organizationId,
    userId: ws.member.userId,
    scopes: overrides.scopes ?? ["profile:write"],
    expiresAt: overrides.expiresAt ?? null,
  });

describe("API tokens", () => {
  it("are north_ plus at least 128 random bits, stored only as a SHA-256 hash", async () => {
    const created = await mint();
    expect(created.token).toMatch(/^north_[A-Za-z0-9_-]{43}$/);
    const rows = await db.owner.client`select * from api_tokens where id = ${created.id}`;
    expect(rows[0]?.token_hash).toBe(hashToken(created.token));
    expect(JSON.stringify(rows)).not.toContain(created.token.slice(6));
  });

  it("resolve to their principal on the app role, and record a last-used time", async () => {
    const created = await mint({ scopes: ["profile:write", "memory:read"] });
    expect(await resolveApiToken(db.app.db, created.token)).toEqual({
      tokenId: created.id,
      organizationId: ws.organizationId,
      userId: ws.member.userId,
      role: "member",
      scopes: ["profile:write", "memory:read"],
    });
    const [row] = await db.owner
      .client`select last_used_at from api_tokens where id = ${created.id}`;
    expect(row?.last_used_at).not.toBeNull();
  });

  it("resolve to null when expired, revoked, unknown or malformed", async () => {
    const expired = await mint({ expiresAt: new Date(Date.now() - 1000) });
    const revoked = await mint();
    expect(await revokeApiToken(db.owner.db, { id: revoked.id })).toMatchObject({ found: true });
    for (const token of [
      expired.token,
      revoked.token,
      `north_${"A".repeat(43)}`,
      "north_short",
      "",
    ]) {
      expect(await resolveApiToken(db.app.db, token)).toBeNull();
    }
  });

  it("list without hashes, and revoking an unknown id says so", async () => {
    const listed = await listApiTokens(db.owner.db, { organizationId: ws.organizationId });
    expect(listed.length).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toMatch(/token_hash|[0-9a-f]{64}/);
    expect(
      await revokeApiToken(db.owner.db, { id: "00000000-0000-0000-0000-000000000000" }),
    ).toEqual({
      found: false,
    });
  });

  it("refuse a scope outside the four SPEC scopes and a user outside the organization", async () => {
    await expect(mint({ scopes: ["root"] })).rejects.toMatchObject({
      cause: expect.objectContaining({ code: "23514" }),
    });
    const other = await createWorkspace(db.owner.db);
    await expect(
      createApiToken(db.owner.db, {
        organizationId: ws.organizationId,
        userId: other.member.userId,
        scopes: [],
        expiresAt: null,
      }),
    ).rejects.toMatchObject({ cause: expect.objectContaining({ code: "23503" }) });
  });
});
