/**
 * The Tier A cases (issue 22, point 7) against the scripted stand-in: the real Claude Code CLI
 * plays each case's lawyer turns, the Messages API stand-in plays the turns a good model would
 * take, and every check of the case's contract must hold. This proves the harness and North's
 * side of each case; `bun run test:tier-a` runs the same cases with a real model
 * (docs/tier-a.md). One North (two servers: the rate-limit case has its own budget), one Claude
 * Code HOME, a fresh lawyer per case.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { type MessagesApi, startMessagesApi } from "../support/messages-api.ts";
import { TIER_A_CASES } from "../tier-a/cases.ts";
import { startTierA, type TierA } from "../tier-a/harness.ts";

let db: TestDatabase;
let messages: MessagesApi;
let tierA: TierA;

beforeAll(async () => {
  db = await createTestDatabase();
  messages = await startMessagesApi();
  tierA = await startTierA({
    database: { ownerUrl: db.ownerUrl, appUrl: db.appUrl, pooler: db.pooler },
    model: { kind: "scripted", messages },
  });
});
afterAll(async () => {
  await tierA?.close();
  await messages?.close();
  await db?.drop();
});

describe("Tier A cases with the scripted model", () => {
  it.each(TIER_A_CASES.map((c) => [c.id, c] as const))(
    "%s",
    async (_id, tierACase) => {
      const report = await tierA.runCase(tierACase);
      expect(report.misses, [...report.misses, "", ...report.trace].join("\n")).toEqual([]);
    },
    120_000,
  );
});
