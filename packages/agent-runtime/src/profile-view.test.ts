import { describe, expect, it } from "vitest";
import { displayQuestion, suggestQuestions } from "./profile-view.ts";
import {
  findBankQuestion,
  LEGACY_QUESTION_LABEL,
  LOCALES,
  QUESTION_BANK,
  RETIRED_QUESTION_IDS,
} from "./question-bank.ts";
import { resolveQuestionId } from "./question-id.ts";

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

  it("words every entry as a question in each locale", () => {
    for (const q of QUESTION_BANK) {
      for (const locale of LOCALES) expect(q.wording[locale]).toMatch(/\S.*\?$/);
    }
  });

  it("uses ids, current and retired, that a save accepts as explicit question ids", () => {
    for (const id of [...QUESTION_BANK.map((q) => q.id), ...RETIRED_QUESTION_IDS]) {
      expect(resolveQuestionId(id, "q")).toMatchObject({ ok: true, value: { kind: "explicit" } });
    }
  });

  it("keeps retired ids, so the legacy path stays tested", () => {
    expect(RETIRED_QUESTION_IDS.length).toBeGreaterThan(0);
    for (const id of RETIRED_QUESTION_IDS) expect(findBankQuestion(id)).toBeUndefined();
  });

  it("finds an entry by its id", () => {
    for (const q of QUESTION_BANK) expect(findBankQuestion(q.id)).toBe(q);
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

  it("shows the English bank wording when no locale is given", () => {
    expect(displayQuestion("practice-areas", null)).toEqual({
      question: QUESTION_BANK[0]?.wording.en,
      questionSource: "bank",
    });
  });

  it("labels every retired id with the legacy label, which is never blank", () => {
    expect(LEGACY_QUESTION_LABEL.trim()).not.toBe("");
    for (const id of RETIRED_QUESTION_IDS) {
      expect(displayQuestion(id, null)).toEqual({
        question: LEGACY_QUESTION_LABEL,
        questionSource: "legacy_label",
      });
    }
  });
});

describe("suggestQuestions", () => {
  it("drops answered bank ids and ignores custom ones", () => {
    const first = QUESTION_BANK[0]?.id ?? "";
    const suggested = suggestQuestions([first, "my-own-question"]);
    expect(suggested.map((s) => s.question_id)).not.toContain(first);
    expect(suggested).toHaveLength(QUESTION_BANK.length - 1);
  });

  it("suggests each unanswered entry with its id and wording, in English by default", () => {
    expect(suggestQuestions([])).toEqual(
      QUESTION_BANK.map((q) => ({ question_id: q.id, question: q.wording.en })),
    );
  });

  it("words the suggestions in the requested locale", () => {
    expect(suggestQuestions([], "fr").map((s) => s.question)).toEqual(
      QUESTION_BANK.map((q) => q.wording.fr),
    );
  });

  it("returns an empty list, not a completion marker, when every bank id is answered", () => {
    expect(suggestQuestions(QUESTION_BANK.map((q) => q.id))).toEqual([]);
  });
});
