import fc from "fast-check";
import { describe, expect, it } from "vitest";
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

  it("accepts an explicit id as sent", () => {
    expect(resolveQuestionId("court.filing:v2_x-1", "q")).toEqual({
      ok: true,
      value: { questionId: "court.filing:v2_x-1", kind: "explicit" },
    });
  });

  it("treats an id that only contains auto: further in as explicit", () => {
    const inner = `x${autoQuestionId("anything")}`;
    expect(resolveQuestionId(inner, "q")).toEqual({
      ok: true,
      value: { questionId: inner, kind: "explicit" },
    });
  });

  it("reserves an auto id with a digit too many", () => {
    expect(resolveQuestionId(`${autoQuestionId("anything")}0`, "q")).toMatchObject({
      ok: false,
      code: "NORTH_ID_RESERVED",
    });
  });

  it.each(["auto:custom", "has space"])("names the question_id field when it refuses %j", (id) => {
    const refused = resolveQuestionId(id, "q");
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.message).toContain("question_id");
  });

  it("marks a well-formed auto id sent by the caller so it can never create a row", () => {
    const id = autoQuestionId("anything");
    expect(resolveQuestionId(id, "q")).toEqual({
      ok: true,
      value: { questionId: id, kind: "caller-auto" },
    });
  });
});
