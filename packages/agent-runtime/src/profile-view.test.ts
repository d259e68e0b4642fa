import { describe, expect, it } from "vitest";
import { displayQuestion, suggestQuestions } from "./profile-view.ts";
import { LEGACY_QUESTION_LABEL, QUESTION_BANK, RETIRED_QUESTION_IDS } from "./question-bank.ts";

describe("question bank", () => {
  it("has about ten entries with unique ids, English and French wording, none retired", () => {
    const ids = QUESTION_BANK.map((q) => q.id);
    expect(ids.length).toBeGreaterThanOrEqual(8);
    expect(new Set(ids).size).toBe(ids.length);
    for (const q of QUESTION_BANK) {
      expect(q.wording.en).not.toBe("");
      expect(q.wording.fr).not.toBe(q.wording.en);
      expect(RETIRED_QUESTION_IDS).not.toContain(q.id);
    }
  });
});

describe("displayQuestion", () => {
  it("prefers the recorded wording, even under a bank id", () => {
    expect(displayQuestion("practice-areas", "What do you litigate?")).toEqual({
      question: "What do you litigate?",
      questionSource: "recorded",
    });
  });

  it("falls back to the bank wording in the requested locale", () => {
    expect(displayQuestion("practice-areas", null, "fr")).toEqual({
      question: QUESTION_BANK[0]?.wording.fr,
      questionSource: "bank",
    });
  });

  it("labels a retired id with the legacy label", () => {
    expect(displayQuestion(RETIRED_QUESTION_IDS[0] ?? "", null)).toEqual({
      question: LEGACY_QUESTION_LABEL,
      questionSource: "legacy_label",
    });
  });
});

describe("suggestQuestions", () => {
  it("drops answered bank ids and ignores custom ones", () => {
    const first = QUESTION_BANK[0]?.id ?? "";
    const suggested = suggestQuestions([first, "my-own-question"]);
    expect(suggested.map((s) => s.question_id)).not.toContain(first);
    expect(suggested).toHaveLength(QUESTION_BANK.length - 1);
  });

  it("returns an empty list, not a completion marker, when every bank id is answered", () => {
    expect(suggestQuestions(QUESTION_BANK.map((q) => q.id))).toEqual([]);
  });
});
