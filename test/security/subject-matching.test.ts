import { createFingerprinter } from "@north/db";
import { describe, expect, it } from "vitest";
import { createWorkspace } from "../support/fixtures.ts";
import { TEST_AUDIT_KEY, useTestApp } from "../support/mcp.ts";
import { forget, held, recall, remember } from "../support/memory-tools.ts";
import { northJson } from "../support/processes.ts";

/**
 * Finding 7: subject matching by exact spelling. "Helene Dubois" found nothing held about
 * client "Hélène Dubois" — an access or erasure request that silently misses. Subjects now match
 * on a canonical form, a lookup without a type matches every type, and `north subjects rekey`
 * carries fingerprints written before over to the canonical form.
 */

const { db, harness } = useTestApp();

describe("subjects match on their canonical form", () => {
  it("finds client Hélène Dubois as 'helene  DUBOIS', with or without the type", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.manager, { role: "manager" });
    await remember(client, {
      kind: "observation",
      origin: "stated",
      body: "Prefers morning meetings.",
      subject_type: "client",
      subject_id: "Hélène Dubois",
    });
    for (const [type, id] of [
      [undefined, "helene  DUBOIS"],
      ["client", "HELENE dubois"],
      [undefined, "Hélène\u200E Dubois"],
    ] as const) {
      const found = await held(client, type as string, id);
      expect(found.structured.memories).toHaveLength(1);
    }
    const byType = await recall(client, { subject_type: "client", subject_id: "helene dubois" });
    expect(byType.structured.memories).toHaveLength(1);
    const otherType = await held(client, "person", "Helene Dubois");
    expect(otherType.structured.memories).toHaveLength(0);
    const erased = await forget(client, { subject_id: "HÉLÈNE DUBOIS" });
    expect(erased.structured).toMatchObject({ outcome: "forgotten", forgotten: 1, remaining: 0 });
  });

  it("re-keys fingerprints written under the old spelling-sensitive key with north subjects rekey", async () => {
    const ws = await createWorkspace(db.owner.db);
    const old = createFingerprinter(TEST_AUDIT_KEY)("client\u0000hélène dubois").fingerprint;
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at,
                            subject_type, subject_id, subject_fingerprint)
      values (${ws.organizationId}, ${ws.member.userId}, 'observation', 'stated', 'Old row.', 'old',
              now() + interval '1 day', 'client', 'Hélène Dubois', ${old})`;
    const client = await harness.connect(ws.manager, { role: "manager" });
    expect((await held(client, "client", "Hélène Dubois")).structured.memories).toHaveLength(0);

    const result = await northJson<{ checked: number; rekeyed: number }>(["subjects", "rekey"], {
      DATABASE_URL: db.ownerUrl,
      NORTH_AUDIT_KEY: TEST_AUDIT_KEY,
    });
    expect(result.rekeyed).toBeGreaterThanOrEqual(1);
    expect((await held(client, "client", "helene dubois")).structured.memories).toHaveLength(1);
    const again = await northJson<{ rekeyed: number }>(["subjects", "rekey"], {
      DATABASE_URL: db.ownerUrl,
      NORTH_AUDIT_KEY: TEST_AUDIT_KEY,
    });
    expect(again.rekeyed).toBe(0);
  }, 60_000);
});
