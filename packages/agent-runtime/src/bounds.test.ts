import { describe, expect, it } from "vitest";
import { ANSWER_MAX_CHARS, checkAnswer, checkQuestion, QUESTION_MAX_CHARS } from "./bounds.ts";

describe("checkQuestion", () => {
  it("returns the sanitized question", () => {
    expect(checkQuestion("  Which\tcourts? \u202E")).toEqual({ ok: true, value: "Which courts?" });
  });

  it("refuses a question that is empty after sanitizing, with a message", () => {
    const empty = checkQuestion(" \u202E\t\u0000 ");
    expect(empty).toMatchObject({ ok: false, code: "NORTH_QUESTION_EMPTY" });
    expect(!empty.ok && empty.message.trim()).not.toBe("");
  });

  it("accepts 500 code points and refuses 501, counting astral characters once", () => {
    expect(checkQuestion("😀".repeat(500))).toMatchObject({ ok: true });
    expect(checkQuestion("😀".repeat(501))).toMatchObject({
      ok: false,
      code: "NORTH_QUESTION_TOO_LONG",
    });
  });

  it("tells the model the question's length and the limit when it is too long", () => {
    const long = checkQuestion("q".repeat(QUESTION_MAX_CHARS + 1));
    expect(long.ok).toBe(false);
    expect(!long.ok && long.message).toContain(String(QUESTION_MAX_CHARS + 1));
    expect(!long.ok && long.message).toContain(String(QUESTION_MAX_CHARS));
  });
});

describe("checkAnswer", () => {
  it("returns the sanitized answer, line breaks kept", () => {
    expect(checkAnswer(" Paris\r\nand Lyon\t")).toEqual({ ok: true, value: "Paris\nand Lyon" });
  });

  it("bounds answers at 10,000 code points", () => {
    expect(checkAnswer("x".repeat(10_000))).toMatchObject({ ok: true });
    expect(checkAnswer("x".repeat(10_001))).toMatchObject({
      ok: false,
      code: "NORTH_ANSWER_TOO_LONG",
    });
  });

  it("refuses an answer that is empty after sanitizing, with a message", () => {
    const empty = checkAnswer("\n\n");
    expect(empty).toMatchObject({ ok: false, code: "NORTH_ANSWER_EMPTY" });
    expect(!empty.ok && empty.message.trim()).not.toBe("");
  });

  it("tells the model the answer's length and the limit when it is too long", () => {
    const long = checkAnswer("x".repeat(ANSWER_MAX_CHARS + 1));
    expect(long.ok).toBe(false);
    expect(!long.ok && long.message).toContain(String(ANSWER_MAX_CHARS + 1));
    expect(!long.ok && long.message).toContain(String(ANSWER_MAX_CHARS));
  });
});
