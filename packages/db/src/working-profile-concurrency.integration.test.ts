import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { type Tenant, withTenant } from "./tenant.ts";
import { readProfile, type SaveAnswerParams, saveAnswer } from "./working-profile.ts";

const TRIALS = 200;
const WRITERS = 8;

let db: TestDatabase;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(() => db.drop());

const save = (owner: Tenant, params: Omit<SaveAnswerParams, "owner">) =>
  withTenant(db.app.db, owner, (tx) => saveAnswer(tx, { owner, ...params }));

const tally = (outcomes: string[]) =>
  outcomes.reduce<Record<string, number>>((acc, o) => {
    acc[o] = (acc[o] ?? 0) + 1;
    return acc;
  }, {});

describe("saveAnswer under concurrency (case 12)", () => {
  it(`lets exactly one of ${WRITERS} competing corrections win, ${TRIALS} times`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const questionId = `compete-${trial}`;
      await save(ws.member, { questionId, question: "Q?", answer: "v1" });
      const receipts = await Promise.all(
        Array.from({ length: WRITERS }, (_, w) =>
          save(ws.member, {
            questionId,
            question: "Q?",
            answer: `writer ${w}`,
            expectedVersion: 1,
          }),
        ),
      );
      expect(tally(receipts.map((r) => r.outcome))).toEqual({ updated: 1, conflict: WRITERS - 1 });
      for (const r of receipts) expect(r).toHaveProperty("answerVersion", 2);
    }
    const rows = await withTenant(db.app.db, ws.member, (tx) =>
      readProfile(tx, { owner: ws.member }),
    );
    const compete = rows.filter((r) => r.questionId.startsWith("compete-"));
    expect(compete).toHaveLength(TRIALS);
    expect(compete.every((r) => r.answerVersion === 2)).toBe(true);
  });

  it(`turns ${WRITERS} identical corrections into one update and ${WRITERS - 1} noops, ${TRIALS} times`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const questionId = `same-${trial}`;
      await save(ws.member, { questionId, question: "Q?", answer: "v1" });
      const receipts = await Promise.all(
        Array.from({ length: WRITERS }, () =>
          save(ws.member, { questionId, question: "Q?", answer: "v2", expectedVersion: 1 }),
        ),
      );
      expect(tally(receipts.map((r) => r.outcome))).toEqual({ updated: 1, noop: WRITERS - 1 });
    }
  });

  it(`keeps ${WRITERS} identical id-less creates to one row, ${TRIALS} times`, async () => {
    const owner = (await createWorkspace(db.owner.db)).manager;
    for (let trial = 0; trial < TRIALS; trial++) {
      const receipts = await Promise.all(
        Array.from({ length: WRITERS }, () =>
          save(owner, { question: `Parallel question ${trial}?`, answer: "Same answer." }),
        ),
      );
      expect(tally(receipts.map((r) => r.outcome))).toEqual({ created: 1, noop: WRITERS - 1 });
      expect(new Set(receipts.map((r) => r.questionId)).size).toBe(1);
    }
    const rows = await withTenant(db.app.db, owner, (tx) => readProfile(tx, { owner }));
    expect(rows).toHaveLength(TRIALS);
  });
});
