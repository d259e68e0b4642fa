import { randomUUID } from "node:crypto";
import { codePointLength, sanitizeBody, sanitizeLine } from "@north/agent-runtime";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { createFingerprinter, recordAudit } from "./audit.ts";
import { withTenant } from "./tenant.ts";

let db: TestDatabase;
let ws: Workspace;
const fingerprint = createFingerprinter("test-audit-key-0123456789");

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(() => db.drop());

describe("recordAudit", () => {
  it("stores organization and actor from the tenant, and an id only as fingerprint + length", async () => {
    const requestId = randomUUID();
    const target = fingerprint("ctx-secret-id");
    await withTenant(db.app.db, ws.member, (tx) =>
      recordAudit(tx, {
        tool: "north__working_profile_answer",
        outcome: "created",
        requestId,
        target,
      }),
    );
    const [row] = await db.owner.client`select * from audit_events where request_id = ${requestId}`;
    expect(row).toMatchObject({
      organization_id: ws.organizationId,
      actor_id: ws.member.userId,
      tool: "north__working_profile_answer",
      outcome: "created",
      target_length: 13,
    });
    expect(row?.target_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain("ctx-secret-id");
  });

  it("fingerprints with the key: the same id correlates, another key does not", () => {
    const other = createFingerprinter("another-audit-key-abcdef");
    expect(fingerprint("x").fingerprint).toBe(fingerprint("x").fingerprint);
    expect(other("x").fingerprint).not.toBe(fingerprint("x").fingerprint);
  });

  it("is refused by the table when a target is not a 64-hex fingerprint", async () => {
    await expect(
      db.owner
        .client`insert into audit_events (organization_id, tool, outcome, target_fingerprint, target_length)
                      values (${ws.organizationId}, 'x', 'read', 'the answer text', 15)`,
    ).rejects.toMatchObject({ code: "23514" });
    await expect(
      db.owner.client`insert into audit_events (organization_id, tool, outcome)
                      values (${ws.organizationId}, 'a tool with spaces', 'read')`,
    ).rejects.toMatchObject({ code: "23514" });
  });
});

describe("code point lengths", () => {
  it("agree with PostgreSQL's char_length for sanitized text", async () => {
    const samples = fc.sample(fc.string({ unit: "binary", maxLength: 40 }), 500);
    const values = samples.flatMap((s) => [sanitizeLine(s), sanitizeBody(s)]);
    const rows = await db.owner.client<{ n: number }[]>`
      select char_length(v)::int as n from unnest(${values}::text[]) with ordinality as t(v, i) order by i`;
    expect(rows.map((r) => r.n)).toEqual(values.map(codePointLength));
  });
});
