import { describe, expect, it } from "vitest";
import { createWorkspace } from "../support/fixtures.ts";
import { useTestApp } from "../support/mcp.ts";
import { forget, held, remember } from "../support/memory-tools.ts";

/**
 * Finding 6: a member's forget-by-subject answered "0 memories erased" while a manager's memory
 * about the same person stayed readable, and any memory:write token could erase the
 * organisation's memories about anyone. Subject erasure is a manager's act under `admin`; a
 * member forgets what they wrote; the receipt says what remains.
 */

const { db, harness } = useTestApp();

const SUBJECT = { subject_type: "client", subject_id: "Acme SAS" };
const observation = (body: string) =>
  ({ kind: "observation", origin: "stated", body, ...SUBJECT }) as const;

describe("erasure scope and honesty", () => {
  it("lets a member erase only what they wrote, and says how many others remain", async () => {
    const ws = await createWorkspace(db.owner.db);
    const member = await harness.connect(ws.member, {
      scopes: ["memory:read", "memory:write"],
    });
    const manager = await harness.connect(ws.manager, {
      role: "manager",
      scopes: ["memory:read", "memory:write", "admin"],
    });
    await remember(member, observation("Prefers calls."));
    await remember(manager, observation("Pays late."));
    await remember(manager, observation("Has a new CFO."));

    const receipt = await forget(member, SUBJECT);
    expect(receipt.structured).toMatchObject({ outcome: "forgotten", forgotten: 1, remaining: 2 });
    expect(receipt.text).toMatch(/2 memories about this subject remain/);
    const again = await forget(member, SUBJECT);
    expect(again.structured).toMatchObject({ outcome: "noop", forgotten: 0, remaining: 2 });
    const live = (
      await held(manager, SUBJECT.subject_type, SUBJECT.subject_id)
    ).structured.memories.filter((m) => m.body !== null);
    expect(live).toHaveLength(2);
  });

  it("refuses organisation-wide erasure to a manager token without the admin scope", async () => {
    const ws = await createWorkspace(db.owner.db);
    const author = await harness.connect(ws.member, { scopes: ["memory:read", "memory:write"] });
    await remember(author, observation("Signed in Lyon."));
    const managerNoAdmin = await harness.connect(ws.manager, {
      role: "manager",
      scopes: ["memory:read", "memory:write"],
    });
    const receipt = await forget(managerNoAdmin, SUBJECT);
    expect(receipt.structured).toMatchObject({ forgotten: 0, remaining: 1 });

    const managerAdmin = await harness.connect(ws.manager, {
      role: "manager",
      scopes: ["memory:read", "memory:write", "admin"],
    });
    const erased = await forget(managerAdmin, SUBJECT);
    expect(erased.structured).toMatchObject({ outcome: "forgotten", forgotten: 1, remaining: 0 });
    expect(erased.text).toMatch(/Nothing about this subject remains/);
  });
});
