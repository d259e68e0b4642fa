import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkAnswer, checkQuestion } from "./bounds.ts";
import { autoQuestionId, resolveQuestionId } from "./question-id.ts";
import { sanitizeLine } from "./sanitize.ts";

describe("autoQuestionId", () => {
  it("is auto: plus the lowercase hex SHA-256 of the stored question", () => {
    expect(autoQuestionId("abc")).toBe(
      "auto:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("is stable for any question that sanitizes to the same text", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const once = sanitizeLine(s);
        return autoQuestionId(once) === autoQuestionId(sanitizeLine(once));
      }),
    );
  });

  it("derives the id when none is sent", () => {
    const resolved = resolveQuestionId(undefined, "Which courts?");
    expect(resolved).toEqual({
      ok: true,
      value: { questionId: autoQuestionId("Which courts?"), kind: "auto" },
    });
  });
});

describe("resolveQuestionId", () => {
  it("accepts a 128-character explicit id and refuses a 129-character one", () => {
    expect(resolveQuestionId("a".repeat(128), "q")).toMatchObject({ ok: true });
    expect(resolveQuestionId("a".repeat(129), "q")).toMatchObject({
      ok: false,
      code: "NORTH_ID_INVALID",
    });
  });

  it.each(["", "-leading", "has space", "é", "ctx/a"])("refuses the malformed id %j", (id) => {
    expect(resolveQuestionId(id, "q")).toMatchObject({ ok: false, code: "NORTH_ID_INVALID" });
  });

  it.each(["auto:custom", "AUTO:abc", `auto:${"A".repeat(64)}`])(
    "reserves the auto: prefix for North (%j)",
    (id) => {
      expect(resolveQuestionId(id, "q")).toMatchObject({ ok: false, code: "NORTH_ID_RESERVED" });
    },
  );

  it("marks a well-formed auto id sent by the caller so it can never create a row", () => {
    const id = autoQuestionId("anything");
    expect(resolveQuestionId(id, "q")).toEqual({
      ok: true,
      value: { questionId: id, kind: "caller-auto" },
    });
  });
});

describe("bounds", () => {
  it("refuses a question that is empty after sanitizing", () => {
    expect(checkQuestion(" \u202E\t\u0000 ")).toMatchObject({
      ok: false,
      code: "NORTH_QUESTION_EMPTY",
    });
  });

  it("accepts 500 code points and refuses 501, counting astral characters once", () => {
    expect(checkQuestion("😀".repeat(500))).toMatchObject({ ok: true });
    expect(checkQuestion("😀".repeat(501))).toMatchObject({
      ok: false,
      code: "NORTH_QUESTION_TOO_LONG",
    });
  });

  it("bounds answers at 10,000 code points", () => {
    expect(checkAnswer("x".repeat(10_000))).toMatchObject({ ok: true });
    expect(checkAnswer("x".repeat(10_001))).toMatchObject({
      ok: false,
      code: "NORTH_ANSWER_TOO_LONG",
    });
    expect(checkAnswer("\n\n")).toMatchObject({ ok: false, code: "NORTH_ANSWER_EMPTY" });
  });
});
