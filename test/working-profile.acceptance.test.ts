import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  autoQuestionId,
  LEGACY_QUESTION_LABEL,
  QUESTION_BANK,
  RETIRED_QUESTION_IDS,
} from "@north/agent-runtime";
import { readProfilesForAdmin, withTenant } from "@north/db";
import { describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { useTestApp } from "./support/mcp.ts";
import { readProfile, saveAnswer } from "./support/tools.ts";

/** SPEC §9 cases 1–13, 15 and 17 through the tools, with the official SDK client. */

const { db, harness } = useTestApp();

/** A new lawyer in a new workspace, connected. */
async function newLawyer(): Promise<Client> {
  const ws = await createWorkspace(db.owner.db);
  return harness.connect(ws.member);
}

/** The admin projection (SPEC §6) as the workspace's manager reads it. */
async function adminProjection(ws: Workspace) {
  const result = await withTenant(db.app.db, ws.manager, (tx) =>
    readProfilesForAdmin(tx, { organizationId: ws.organizationId, requesterId: ws.manager.userId }),
  );
  if (!result.ok) throw new Error("the manager was refused the admin projection");
  return result.entries;
}

describe("SPEC §9 acceptance through the tools", () => {
  it("1. shows suggestions on an empty profile and keeps the model's own wording", async () => {
    const client = await newLawyer();
    const empty = await readProfile(client, { view: "next" });
    expect(empty.entries).toEqual([]);
    expect(empty.suggested_questions?.length).toBe(QUESTION_BANK.length);

    const bank = QUESTION_BANK[0];
    const own = "So, what kinds of matters fill most of your week?";
    expect(
      (await saveAnswer(client, { question: own, answer: "M&A, mostly." })).receipt.outcome,
    ).toBe("created");
    const underBank = "Which courts do you end up in most?";
    await saveAnswer(client, {
      question: underBank,
      answer: "Paris commercial court.",
      question_id: bank?.id,
    });

    const { entries } = await readProfile(client);
    expect(entries.map((e) => [e.question, e.question_source])).toEqual([
      [own, "recorded"],
      [underBank, "recorded"],
    ]);
    expect(entries[1]?.question_id).toBe(bank?.id);
  });

  it("2. returns three rows plus the remaining suggestions, then four rows after a save", async () => {
    const client = await newLawyer();
    const ids = QUESTION_BANK.slice(0, 3).map((q) => q.id);
    for (const id of ids)
      await saveAnswer(client, { question: `About ${id}?`, answer: "Yes.", question_id: id });
    const next = await readProfile(client, { view: "next" });
    expect(next.entries).toHaveLength(3);
    expect(next.suggested_questions?.map((s) => s.question_id)).toEqual(
      QUESTION_BANK.slice(3).map((q) => q.id),
    );
    await saveAnswer(client, { question: "Anything else I should know?", answer: "No." });
    expect((await readProfile(client)).entries).toHaveLength(4);
  });

  it("3. keeps a custom question in the profile, out of the suggestions, and in the admin projection", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    const custom = "Do you prefer footnotes or endnotes in opinions?";
    await saveAnswer(client, { question: custom, answer: "Footnotes." });
    const next = await readProfile(client, { view: "next" });
    expect(next.entries.map((e) => e.question)).toEqual([custom]);
    expect(next.suggested_questions?.map((s) => s.question)).not.toContain(custom);
    expect(next.suggested_questions).toHaveLength(QUESTION_BANK.length);
    const projected = await adminProjection(ws);
    expect(projected.map((e) => [e.ownerUserId, e.question, e.questionSource, e.answer])).toEqual([
      [ws.member.userId, custom, "recorded", "Footnotes."],
    ]);
  });

  it("4. drops answered bank ids from suggestions and never reports completion", async () => {
    const client = await newLawyer();
    for (const q of QUESTION_BANK)
      await saveAnswer(client, { question: q.wording.en, answer: "Noted.", question_id: q.id });
    const next = await readProfile(client, { view: "next" });
    expect(next.suggested_questions).toEqual([]);
    expect(Object.keys(next).sort()).toEqual(["block", "entries", "suggested_questions"]);
    const extra = await saveAnswer(client, {
      question: "One more thing about your week?",
      answer: "Fridays are short.",
    });
    expect(extra.receipt.outcome).toBe("created");
    expect((await readProfile(client)).entries).toHaveLength(QUESTION_BANK.length + 1);
  });

  it("5. corrects v1 to v2, then refuses a stale correction and leaves the row alone", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    const id = "drafting-style";
    await saveAnswer(client, {
      question: "How do you like drafts?",
      answer: "Short.",
      question_id: id,
    });
    const v2 = await saveAnswer(client, {
      question: "How do you like drafts?",
      answer: "Short, with a summary.",
      question_id: id,
      expected_version: 1,
    });
    expect(v2.receipt).toEqual({ outcome: "updated", question_id: id, answer_version: 2 });
    const stale = await saveAnswer(client, {
      question: "How do you like drafts?",
      answer: "Long.",
      question_id: id,
      expected_version: 1,
    });
    expect(stale.receipt).toMatchObject({
      outcome: "conflict",
      code: "NORTH_CONFLICT",
      answer_version: 2,
    });
    expect(stale.isError).toBe(true);
    expect(stale.receipt.message).toMatch(/north__working_profile/);
    expect((await readProfile(client)).entries[0]).toMatchObject({
      answer: "Short, with a summary.",
      answer_version: 2,
    });
    expect(
      (await adminProjection(ws)).map((e) => [e.questionId, e.answer, e.answerVersion]),
    ).toEqual([[id, "Short, with a summary.", 2]]);
  });

  it("says an unversioned save found an existing entry, not that it changed since a read", async () => {
    const client = await newLawyer();
    const id = "review-flags";
    await saveAnswer(client, { question: "What first?", answer: "Deadlines.", question_id: id });
    const unversioned = await saveAnswer(client, {
      question: "What first?",
      answer: "Parties.",
      question_id: id,
    });
    await saveAnswer(client, {
      question: "What first?",
      answer: "Deadlines, then parties.",
      question_id: id,
      expected_version: 1,
    });
    const stale = await saveAnswer(client, {
      question: "What first?",
      answer: "Parties.",
      question_id: id,
      expected_version: 1,
    });
    for (const { receipt } of [unversioned, stale]) {
      expect(receipt).toMatchObject({ outcome: "conflict", code: "NORTH_CONFLICT" });
      expect(receipt.message).toMatch(/north__working_profile/);
      expect(receipt.message).toMatch(/expected_version/);
    }
    // Nothing was read before the unversioned save: its advice must differ from a stale read's.
    expect(unversioned.receipt.message).not.toBe(stale.receipt.message);
    expect(unversioned.receipt.message).not.toMatch(/since you read/i);
  });

  it("6. saves an identical answer twice as one row, one version, and a noop", async () => {
    const client = await newLawyer();
    const args = { question: "Which citation style?", answer: "OSCOLA." };
    const first = await saveAnswer(client, args);
    const second = await saveAnswer(client, args);
    expect(first.receipt).toMatchObject({ outcome: "created", answer_version: 1 });
    expect(second.receipt).toEqual({
      outcome: "noop",
      question_id: first.receipt.question_id,
      answer_version: 1,
    });
    expect(second.isError).toBe(false);
    expect((await readProfile(client)).entries).toHaveLength(1);
  });

  it("7. shows nothing of one lawyer's rows to a colleague or another organization", async () => {
    const a = await createWorkspace(db.owner.db);
    const b = await createWorkspace(db.owner.db);
    const owner = await harness.connect(a.member);
    await saveAnswer(owner, { question: "Private?", answer: "Mine only." });
    for (const other of [a.manager, b.member]) {
      const client = await harness.connect(other);
      expect((await readProfile(client)).entries).toEqual([]);
      const sneaky = await saveAnswer(client, {
        question: "Private?",
        answer: "Overwrite.",
        question_id: autoQuestionId("Private?"),
        expected_version: 1,
      });
      expect(sneaky.receipt).toMatchObject({ outcome: "rejected", code: "NORTH_TARGET_MISSING" });
    }
    expect((await readProfile(owner)).entries[0]?.answer).toBe("Mine only.");
  });

  it("9. keeps the same question under ctx-a, ctx-b and no id as three rows", async () => {
    const client = await newLawyer();
    const question = "Which tone with clients?";
    await saveAnswer(client, { question, answer: "Warm.", question_id: "ctx-a" });
    await saveAnswer(client, { question, answer: "Formal.", question_id: "ctx-b" });
    await saveAnswer(client, { question, answer: "Depends." });
    expect((await readProfile(client)).entries.map((e) => e.answer)).toEqual([
      "Warm.",
      "Formal.",
      "Depends.",
    ]);
  });

  it("10. follows the id rules: conflicts, question-only updates, auto ids, owners", async () => {
    const client = await newLawyer();
    await saveAnswer(client, { question: "Q?", answer: "A.", question_id: "rules" });
    expect(
      (await saveAnswer(client, { question: "Q?", answer: "B.", question_id: "rules" })).receipt,
    ).toMatchObject({ outcome: "conflict", answer_version: 1 });
    expect(
      (
        await saveAnswer(client, {
          question: "Q reworded?",
          answer: "A.",
          question_id: "rules",
          expected_version: 1,
        })
      ).receipt,
    ).toEqual({ outcome: "updated", question_id: "rules", answer_version: 2 });

    const created = await saveAnswer(client, { question: "Trusted sources?", answer: "Gazettes." });
    const auto = created.receipt.question_id ?? "";
    expect(auto).toBe(autoQuestionId("Trusted sources?"));
    const fix = {
      question: "Trusted sources?",
      answer: "Gazettes and reviews.",
      question_id: auto,
      expected_version: 1,
    };
    expect((await saveAnswer(client, fix)).receipt).toEqual({
      outcome: "updated",
      question_id: auto,
      answer_version: 2,
    });
    expect((await saveAnswer(client, fix)).receipt).toEqual({
      outcome: "noop",
      question_id: auto,
      answer_version: 2,
    });

    const unknown = await saveAnswer(client, {
      question: "Q?",
      answer: "A.",
      question_id: autoQuestionId("never"),
    });
    expect(unknown.receipt).toMatchObject({ outcome: "rejected", code: "NORTH_ID_RESERVED" });
    expect(unknown.isError).toBe(true);

    const colleague = await harness.connect((await createWorkspace(db.owner.db)).member);
    expect(
      (await saveAnswer(colleague, { question: "Q?", answer: "Other.", question_id: "rules" }))
        .receipt,
    ).toMatchObject({ outcome: "created", answer_version: 1 });
  });

  it("11. rejects an expected version for an absent id and creates nothing", async () => {
    const client = await newLawyer();
    const r = await saveAnswer(client, {
      question: "Q?",
      answer: "A.",
      question_id: "absent",
      expected_version: 1,
    });
    expect(r.receipt).toMatchObject({
      outcome: "rejected",
      code: "NORTH_TARGET_MISSING",
      answer_version: null,
    });
    expect((await readProfile(client)).entries).toEqual([]);
  });

  it("12. resolves concurrent saves: one create, one winning correction", async () => {
    const client = await newLawyer();
    const creates = await Promise.all(
      Array.from({ length: 8 }, () =>
        saveAnswer(client, { question: "Parallel?", answer: "Same." }),
      ),
    );
    expect(creates.filter((c) => c.receipt.outcome === "created")).toHaveLength(1);
    const id = creates[0]?.receipt.question_id ?? "";
    const competing = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        saveAnswer(client, {
          question: "Parallel?",
          answer: `writer ${i}`,
          question_id: id,
          expected_version: 1,
        }),
      ),
    );
    expect(competing.map((c) => c.receipt.outcome).sort()).toEqual([
      "conflict",
      "conflict",
      "conflict",
      "conflict",
      "conflict",
      "conflict",
      "conflict",
      "updated",
    ]);
    const identical = await Promise.all(
      Array.from({ length: 8 }, () =>
        saveAnswer(client, {
          question: "Parallel?",
          answer: "final",
          question_id: id,
          expected_version: 2,
        }),
      ),
    );
    expect(identical.map((c) => c.receipt.outcome).sort()).toEqual([
      "noop",
      "noop",
      "noop",
      "noop",
      "noop",
      "noop",
      "noop",
      "updated",
    ]);
    expect((await readProfile(client)).entries).toHaveLength(1);
  });

  it("13. answers lost-response retries with the same id, version and timestamps", async () => {
    const client = await newLawyer();
    const create = { question: "Deadlines?", answer: "Calendar." };
    const first = await saveAnswer(client, create);
    const before = (await readProfile(client)).entries;
    expect((await saveAnswer(client, create)).receipt).toEqual({
      ...first.receipt,
      outcome: "noop",
    });
    expect((await readProfile(client)).entries).toEqual(before);

    const update = {
      ...create,
      answer: "Calendar and docketing.",
      question_id: first.receipt.question_id ?? "",
      expected_version: 1,
    };
    await saveAnswer(client, update);
    const afterUpdate = (await readProfile(client)).entries;
    expect((await saveAnswer(client, update)).receipt).toMatchObject({
      outcome: "noop",
      answer_version: 2,
    });
    expect((await readProfile(client)).entries).toEqual(afterUpdate);
  });

  it("15. reads legacy rows with bank wording or the label, and 101 rows in full", async () => {
    const ws = await createWorkspace(db.owner.db);
    const bank = QUESTION_BANK[2];
    await db.owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, answer)
      values (${ws.organizationId}, ${ws.member.userId}, ${bank?.id ?? ""}, 'old'),
             (${ws.organizationId}, ${ws.member.userId}, ${RETIRED_QUESTION_IDS[1] ?? ""}, 'older')`;
    await db.owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
      select ${ws.organizationId}, ${ws.member.userId}, 'n-' || g, 'Q' || g || '?', 'A' || g
      from generate_series(1, 99) g`;
    const client = await harness.connect(ws.member);
    const { entries } = await readProfile(client, { locale: "fr" });
    expect(entries).toHaveLength(101);
    expect(entries.find((e) => e.question_id === bank?.id)).toMatchObject({
      question: bank?.wording.fr,
      question_source: "bank",
    });
    expect(entries.find((e) => e.question_id === RETIRED_QUESTION_IDS[1])).toMatchObject({
      question: LEGACY_QUESTION_LABEL,
      question_source: "legacy_label",
    });
  });

  it("17. enforces the bounds with receipts and writes no row for a refusal", async () => {
    const client = await newLawyer();
    const cases = [
      [{ question: "\u202E \t ", answer: "A" }, "NORTH_QUESTION_EMPTY"],
      [{ question: "q".repeat(501), answer: "A" }, "NORTH_QUESTION_TOO_LONG"],
      [{ question: "Q?", answer: "  \u0007 " }, "NORTH_ANSWER_EMPTY"],
      [{ question: "Q?", answer: "a".repeat(10_001) }, "NORTH_ANSWER_TOO_LONG"],
      [{ question: "Q?", answer: "A", question_id: "x".repeat(129) }, "NORTH_ID_INVALID"],
    ] as const;
    for (const [args, code] of cases) {
      const r = await saveAnswer(client, args);
      expect(r.receipt, code).toMatchObject({ outcome: "rejected", code });
      expect(r.isError).toBe(true);
      expect(r.text).toContain(code);
    }
    expect((await readProfile(client)).entries).toEqual([]);
    const edge = await saveAnswer(client, {
      question: "q".repeat(500),
      answer: "A",
      question_id: `z${"9".repeat(127)}`,
    });
    expect(edge.receipt).toMatchObject({ outcome: "created", answer_version: 1 });
  });

  it("fails schema validation before the handler for a missing required field", async () => {
    const client = await newLawyer();
    const before = await db.owner.client`select count(*)::int as n from audit_events`;
    const result = await client.callTool({
      name: "north__working_profile_answer",
      arguments: { question: "Q?" },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const after = await db.owner.client`select count(*)::int as n from audit_events`;
    expect(after[0]?.n).toBe(before[0]?.n);
    expect((await readProfile(client)).entries).toEqual([]);
  });

  it("never takes identity from input: an organization or owner field is ignored", async () => {
    const a = await createWorkspace(db.owner.db);
    const client = await harness.connect(a.member);
    const result = await client.callTool({
      name: "north__working_profile_answer",
      arguments: {
        question: "Who?",
        answer: "Me.",
        owner_user_id: randomUUID(),
        organization_id: randomUUID(),
      },
    });
    expect((result.structuredContent as { outcome: string }).outcome).toBe("created");
    const [row] = await db.owner
      .client`select organization_id, owner_user_id from working_profile_answers where answer = 'Me.'`;
    expect(row).toEqual({ organization_id: a.organizationId, owner_user_id: a.member.userId });
  });
});
