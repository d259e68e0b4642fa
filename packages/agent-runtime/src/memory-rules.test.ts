import { describe, expect, it } from "vitest";
import { checkSubject, checkSubjectLookup, subjectKey, subjectKeyOf } from "./memory-rules.ts";

describe("subjects", () => {
  it("are both fields or neither, and required for an observation", () => {
    expect(checkSubject("fact", undefined, undefined)).toEqual({ ok: true, value: null });
    expect(checkSubject("observation", undefined, undefined)).toMatchObject({
      code: "NORTH_SUBJECT_REQUIRED",
    });
    expect(checkSubject("fact", "client", undefined)).toMatchObject({
      code: "NORTH_SUBJECT_REQUIRED",
    });
    expect(checkSubject("fact", "Not A Word!", "x")).toMatchObject({
      code: "NORTH_SUBJECT_INVALID",
    });
  });

  it("key case-insensitively, so a lookup finds what a write stored", () => {
    const stored = checkSubject("observation", "Client", "  Acme   SAS ");
    expect(stored.ok && subjectKey(stored.value as { type: string; id: string })).toBe(
      subjectKeyOf("client", "acme sas"),
    );
  });

  it("for a lookup need both fields, with a lookup's message and no key otherwise", () => {
    expect(checkSubjectLookup("client", undefined)).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_REQUIRED",
      message: "Send both subject_type and subject_id.",
    });
    expect(subjectKeyOf(undefined, "Acme")).toBeUndefined();
    expect(subjectKeyOf("client", "Acme")).toBe("client\u0000acme");
  });
});
