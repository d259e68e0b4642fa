import { autoQuestionId } from "@north/agent-runtime";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { connectDatabase } from "./client.ts";
import type { Tenant } from "./tenant.ts";
import { withOrganization, withTenant } from "./tenant.ts";
import {
  readOwnProfile,
  readProfile,
  readProfilesForAdmin,
  type SaveAnswerParams,
  saveAnswer,
} from "./working-profile.ts";

let db: TestDatabase;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(() => db.drop());

const save = (owner: Tenant, params: Omit<SaveAnswerParams, "owner">) =>
  withTenant(db.app.db, owner, (tx) => saveAnswer(tx, { owner, ...params }));

const read = (owner: Tenant) => withTenant(db.app.db, owner, (tx) => readProfile(tx, { owner }));

let seq = 0;
/** A fresh explicit id per test, so cases do not see each other's rows. */
const freshId = () => `case-${++seq}`;

describe("saveAnswer: the SPEC §4 state table", () => {
  it("creates version 1 when no expected version is sent and no row exists", async () => {
    const id = freshId();
    const receipt = await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    expect(receipt).toEqual({ outcome: "created", questionId: id, answerVersion: 1 });
  });

  it("returns noop with the current version for an unversioned save of the same pair", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    const again = await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    expect(again).toEqual({ outcome: "noop", questionId: id, answerVersion: 1 });
    expect((await read(ws.member)).filter((r) => r.questionId === id)).toHaveLength(1);
  });

  it("returns conflict with the current version for an unversioned save of a different pair", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    const receipt = await save(ws.member, { questionId: id, question: "Q?", answer: "B." });
    expect(receipt).toEqual({
      outcome: "conflict",
      code: "NORTH_CONFLICT",
      questionId: id,
      answerVersion: 1,
    });
    const row = (await read(ws.member)).find((r) => r.questionId === id);
    expect(row?.answer).toBe("A.");
  });

  it("updates to version + 1 under the same id when the expected version is current", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    const receipt = await save(ws.member, {
      questionId: id,
      question: "Q?",
      answer: "B.",
      expectedVersion: 1,
    });
    expect(receipt).toEqual({ outcome: "updated", questionId: id, answerVersion: 2 });
  });

  it("counts a question-only change as a difference", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    const receipt = await save(ws.member, {
      questionId: id,
      question: "Q, reworded?",
      answer: "A.",
      expectedVersion: 1,
    });
    expect(receipt).toMatchObject({ outcome: "updated", answerVersion: 2 });
    const row = (await read(ws.member)).find((r) => r.questionId === id);
    expect(row?.question).toBe("Q, reworded?");
  });

  it("returns noop when the expected version is current and the pair is equal", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    const receipt = await save(ws.member, {
      questionId: id,
      question: "Q?",
      answer: "A.",
      expectedVersion: 1,
    });
    expect(receipt).toEqual({ outcome: "noop", questionId: id, answerVersion: 1 });
  });

  it("returns noop and leaves timestamps alone for an exact retry of a committed update", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    await save(ws.member, { questionId: id, question: "Q?", answer: "B.", expectedVersion: 1 });
    const before = (await read(ws.member)).find((r) => r.questionId === id);
    const retry = await save(ws.member, {
      questionId: id,
      question: "Q?",
      answer: "B.",
      expectedVersion: 1,
    });
    expect(retry).toEqual({ outcome: "noop", questionId: id, answerVersion: 2 });
    const after = (await read(ws.member)).find((r) => r.questionId === id);
    expect(after).toEqual(before);
  });

  it("returns conflict when the expected version is stale and the pair differs", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    await save(ws.member, { questionId: id, question: "Q?", answer: "B.", expectedVersion: 1 });
    const receipt = await save(ws.member, {
      questionId: id,
      question: "Q?",
      answer: "C.",
      expectedVersion: 1,
    });
    expect(receipt).toEqual({
      outcome: "conflict",
      code: "NORTH_CONFLICT",
      questionId: id,
      answerVersion: 2,
    });
    expect((await read(ws.member)).find((r) => r.questionId === id)?.answer).toBe("B.");
  });

  it("rejects any expected version for an absent id and creates nothing (case 11)", async () => {
    const id = freshId();
    for (const expectedVersion of [1, 7, 2 ** 40]) {
      const receipt = await save(ws.member, {
        questionId: id,
        question: "Q?",
        answer: "A.",
        expectedVersion,
      });
      expect(receipt).toMatchObject({ outcome: "rejected", code: "NORTH_TARGET_MISSING" });
    }
    expect((await read(ws.member)).some((r) => r.questionId === id)).toBe(false);
  });
});

describe("saveAnswer: what a refusal or a stale save tells the caller", () => {
  it("returns conflict for an unversioned save that changes only the question", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    const receipt = await save(ws.member, { questionId: id, question: "Other Q?", answer: "A." });
    expect(receipt).toMatchObject({ outcome: "conflict", answerVersion: 1 });
  });

  it("throws on an expected version that is not a positive integer, before touching the row", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "A." });
    for (const expectedVersion of [0, -1, 1.5]) {
      await expect(
        save(ws.member, { questionId: id, question: "Q?", answer: "B.", expectedVersion }),
      ).rejects.toThrow(/expectedVersion/);
    }
    expect((await read(ws.member)).find((r) => r.questionId === id)?.answer).toBe("A.");
  });

  it("names the parameter to drop when an update or an auto id finds no entry", async () => {
    const missing = await save(ws.member, {
      questionId: freshId(),
      question: "Q?",
      answer: "A.",
      expectedVersion: 1,
    });
    expect(missing).toMatchObject({ outcome: "rejected", code: "NORTH_TARGET_MISSING" });
    expect(missing.outcome === "rejected" && missing.message).toMatch(/expected_version/);
    const reserved = await save(ws.member, {
      questionId: autoQuestionId("Never asked?"),
      question: "Never asked?",
      answer: "A.",
    });
    expect(reserved).toMatchObject({ outcome: "rejected", code: "NORTH_ID_RESERVED" });
    expect(reserved.outcome === "rejected" && reserved.message).toMatch(/question_id/);
  });
});

describe("readProfilesForAdmin", () => {
  it("gives a manager every member's entries with owner, version and dates", async () => {
    const team = await createWorkspace(db.owner.db, "Admin read");
    await save(team.member, { questionId: "role", question: "Role?", answer: "Partner." });
    const result = await withTenant(db.app.db, team.manager, (tx) =>
      readProfilesForAdmin(tx, {
        organizationId: team.organizationId,
        requesterId: team.manager.userId,
      }),
    );
    expect(result).toMatchObject({
      ok: true,
      entries: [
        {
          ownerUserId: team.member.userId,
          questionId: "role",
          question: "Role?",
          answer: "Partner.",
          answerVersion: 1,
        },
      ],
    });
    const [entry] = result.ok ? result.entries : [];
    expect(entry?.ownerEmail).toMatch(/@example\.test$/);
    expect(entry?.createdAt).toBeInstanceOf(Date);
    expect(entry?.updatedAt.getTime()).toBeGreaterThan(0);
  });

  it("answers an ordinary member with ok: false", async () => {
    const result = await withTenant(db.app.db, ws.member, (tx) =>
      readProfilesForAdmin(tx, {
        organizationId: ws.organizationId,
        requesterId: ws.member.userId,
      }),
    );
    expect(result).toEqual({ ok: false });
  });
});

describe("question ids (cases 9, 10, 17)", () => {
  it("keeps the same question under ctx-a, ctx-b and no id as three rows", async () => {
    const owner = (await createWorkspace(db.owner.db)).member;
    const question = "Which court do you file in most?";
    await save(owner, { questionId: "ctx-a", question, answer: "Paris." });
    await save(owner, { questionId: "ctx-b", question, answer: "Lyon." });
    const auto = await save(owner, { question, answer: "Both." });
    expect(auto).toMatchObject({ outcome: "created", questionId: autoQuestionId(question) });
    const ids = (await read(owner)).map((r) => r.questionId).sort();
    expect(ids).toEqual(["ctx-a", "ctx-b", autoQuestionId(question)].sort());
  });

  it("lets a returned auto id drive a versioned correction and its retry", async () => {
    const question = `What should be flagged first? ${freshId()}`;
    const created = await save(ws.member, { question, answer: "Deadlines." });
    expect(created.outcome).toBe("created");
    const id = created.questionId ?? "";
    const correction = {
      questionId: id,
      question,
      answer: "Deadlines, then liability caps.",
      expectedVersion: 1,
    };
    expect(await save(ws.member, correction)).toEqual({
      outcome: "updated",
      questionId: id,
      answerVersion: 2,
    });
    expect(await save(ws.member, correction)).toEqual({
      outcome: "noop",
      questionId: id,
      answerVersion: 2,
    });
  });

  it("rejects a caller-sent auto id that names no row, with or without a version", async () => {
    const id = autoQuestionId(`never saved ${freshId()}`);
    expect(await save(ws.member, { questionId: id, question: "Q?", answer: "A." })).toMatchObject({
      outcome: "rejected",
      code: "NORTH_ID_RESERVED",
    });
    expect(
      await save(ws.member, { questionId: id, question: "Q?", answer: "A.", expectedVersion: 1 }),
    ).toMatchObject({ outcome: "rejected", code: "NORTH_TARGET_MISSING" });
    expect((await read(ws.member)).some((r) => r.questionId === id)).toBe(false);
  });

  it("keeps the same explicit id under another owner as a separate row", async () => {
    const id = freshId();
    await save(ws.member, { questionId: id, question: "Q?", answer: "Mine." });
    const other = await save(ws.manager, { questionId: id, question: "Q?", answer: "Theirs." });
    expect(other).toMatchObject({ outcome: "created", answerVersion: 1 });
    expect((await read(ws.member)).find((r) => r.questionId === id)?.answer).toBe("Mine.");
    expect((await read(ws.manager)).find((r) => r.questionId === id)?.answer).toBe("Theirs.");
  });

  it("accepts a 500-character question and a 128-character id", async () => {
    const id = `b${"x".repeat(127)}`;
    const receipt = await save(ws.member, {
      questionId: id,
      question: "é".repeat(500),
      answer: "A",
    });
    expect(receipt).toMatchObject({ outcome: "created", questionId: id });
  });

  it.each([
    ["NORTH_QUESTION_EMPTY", { question: " \t\u202E ", answer: "A" }],
    ["NORTH_QUESTION_TOO_LONG", { question: "q".repeat(501), answer: "A" }],
    ["NORTH_ANSWER_EMPTY", { question: "Q?", answer: "\u0000\r\n" }],
    ["NORTH_ANSWER_TOO_LONG", { question: "Q?", answer: "a".repeat(10_001) }],
    ["NORTH_ID_INVALID", { question: "Q?", answer: "A", questionId: "i".repeat(129) }],
    ["NORTH_ID_RESERVED", { question: "Q?", answer: "A", questionId: "auto:mine" }],
  ])("rejects with %s and writes no row", async (code, input) => {
    const owner = (await createWorkspace(db.owner.db)).member;
    expect(await save(owner, input)).toMatchObject({ outcome: "rejected", code });
    expect(await read(owner)).toEqual([]);
  });
});

describe("lost responses (case 13)", () => {
  it("answers a retried create with the same id and version and untouched timestamps", async () => {
    const owner = (await createWorkspace(db.owner.db)).member;
    const payload = { question: "Which sources do you trust?", answer: "Official gazettes." };
    const first = await save(owner, payload);
    const [before] = await read(owner);
    const retry = await save(owner, payload);
    expect(retry).toEqual({ outcome: "noop", questionId: first.questionId, answerVersion: 1 });
    expect(await read(owner)).toEqual([before]);
  });
});

describe("readOwnProfile: the tool calls' read of the caller's own profile", () => {
  it("reads the transaction's own tenant's rows only, and nothing outside a tenant transaction", async () => {
    const other = await createWorkspace(db.owner.db, "Other");
    const mine = freshId();
    const theirs = freshId();
    await save(ws.member, { questionId: mine, question: "Mine?", answer: "Mine." });
    await save(ws.manager, { questionId: theirs, question: "A colleague's?", answer: "Theirs." });
    await save(other.member, {
      questionId: theirs,
      question: "Another firm's?",
      answer: "Theirs.",
    });
    const own = await withTenant(db.app.db, ws.member, (tx) => readOwnProfile(tx));
    expect(own.map((r) => r.questionId)).toContain(mine);
    expect(own.map((r) => r.questionId)).not.toContain(theirs);
    expect(own).toEqual(await read(ws.member));
    // No tenant set (the app role's own transaction): the settings are empty, so no rows.
    const untenanted = await db.app.db.transaction((tx) => readOwnProfile(tx));
    expect(untenanted).toEqual([]);
    // An organisation's transaction without a user, on the path tool calls take: no rows either.
    const noUser = await withOrganization(db.app.db, ws.organizationId, (tx) => readOwnProfile(tx));
    expect(noUser).toEqual([]);
  });

  it("has no parameters, so each connection plans it once: never a custom plan per call", async () => {
    // One connection, so every call meets the statement it prepared (not behind PgBouncer, where
    // North prepares nothing: decision 026).
    const one = connectDatabase(db.appUrl, { max: 1 });
    try {
      const other = await createWorkspace(db.owner.db, "Plan");
      const mine = freshId();
      const theirs = freshId();
      await save(ws.member, { questionId: mine, question: "Q?", answer: "A." });
      await save(other.member, { questionId: theirs, question: "Q?", answer: "A." });
      // Two tenants in turn on the one connection: its one plan reads each one's own rows.
      for (let i = 0; i < 12; i++) {
        const tenant = i % 2 === 0 ? ws.member : other.member;
        const ids = (await withTenant(one.db, tenant, (tx) => readOwnProfile(tx))).map(
          (r) => r.questionId,
        );
        expect(ids).toContain(tenant === ws.member ? mine : theirs);
        expect(ids).not.toContain(tenant === ws.member ? theirs : mine);
      }
      const plans = await withTenant(one.db, ws.member, (tx) =>
        tx.execute<{ generic: number; custom: number }>(
          sql`select generic_plans::int as generic, custom_plans::int as custom
              from pg_prepared_statements
              where statement like '%working_profile_answers%current_setting%'
                and statement not like '%pg_prepared_statements%'`,
        ),
      );
      expect([...plans]).toEqual([{ generic: 12, custom: 0 }]);
    } finally {
      await one.close();
    }
  });
});
