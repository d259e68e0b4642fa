import { describe, expect, it } from "vitest";
import {
  canonicalSubjectId,
  checkConversationId,
  checkExpiryDays,
  checkMemoryBody,
  checkRecallQuery,
  checkSubject,
  checkSubjectLookup,
  DEFAULT_MEMORY_EXPIRY_DAYS,
  MAX_MEMORY_EXPIRY_DAYS,
  MEMORY_BODY_MAX_CHARS,
  PERSON_SUBJECT_TYPES,
  RECALL_QUERY_MAX_CHARS,
  subjectKey,
  subjectKeyOf,
} from "./memory-rules.ts";

describe("checkMemoryBody", () => {
  it("returns the sanitized body, line breaks kept", () => {
    expect(checkMemoryBody("  Files go\r\nthrough e-filing.\u202E ")).toEqual({
      ok: true,
      value: "Files go\nthrough e-filing.",
    });
  });

  it("refuses a body that is empty after sanitizing, with a message", () => {
    const empty = checkMemoryBody(" \u0000\r\n\t ");
    expect(empty).toMatchObject({ ok: false, code: "NORTH_BODY_EMPTY" });
    expect(!empty.ok && empty.message.trim()).not.toBe("");
  });

  it("accepts 2,000 code points and refuses 2,001, counting astral characters once", () => {
    expect(checkMemoryBody("😀".repeat(MEMORY_BODY_MAX_CHARS))).toMatchObject({ ok: true });
    expect(checkMemoryBody("😀".repeat(MEMORY_BODY_MAX_CHARS + 1))).toMatchObject({
      ok: false,
      code: "NORTH_BODY_TOO_LONG",
    });
  });

  it("tells the model the body's length and the limit when it is too long", () => {
    const long = checkMemoryBody("m".repeat(MEMORY_BODY_MAX_CHARS + 1));
    expect(long.ok).toBe(false);
    expect(!long.ok && long.message).toContain(String(MEMORY_BODY_MAX_CHARS + 1));
    expect(!long.ok && long.message).toContain(String(MEMORY_BODY_MAX_CHARS));
  });
});

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

  it("for a lookup need the id; the type is optional and matches every type when absent", () => {
    expect(checkSubjectLookup("client", undefined)).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_REQUIRED",
    });
    expect(checkSubjectLookup(undefined, " Acme ")).toEqual({ ok: true, value: { id: "Acme" } });
    expect(checkSubjectLookup("Not A Type", "Acme")).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_INVALID",
    });
    expect(checkSubjectLookup(undefined, "x".repeat(201))).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_INVALID",
    });
    expect(subjectKeyOf(undefined, undefined)).toBeUndefined();
    expect(subjectKeyOf(undefined, "Acme")).toBe("acme");
    expect(subjectKeyOf("client", "Acme")).toBe("acme");
  });

  it("trim and lower-case the type and sanitize the id", () => {
    expect(checkSubject("fact", " Client ", " Acme\tSAS\u202E ")).toEqual({
      ok: true,
      value: { type: "client", id: "Acme SAS" },
    });
  });

  it("refuse an id without a type, even for a fact, naming both fields", () => {
    const refused = checkSubject("fact", undefined, "Acme");
    expect(refused).toMatchObject({ ok: false, code: "NORTH_SUBJECT_REQUIRED" });
    expect(!refused.ok && refused.message).toContain("subject_type");
    expect(!refused.ok && refused.message).toContain("subject_id");
  });

  it("count a field that sanitizes to nothing as missing", () => {
    expect(checkSubject("fact", "client", " \u202E ")).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_REQUIRED",
    });
    expect(checkSubject("fact", "  ", "Acme")).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_REQUIRED",
    });
  });

  it.each(["_client", "9lives", "a".repeat(33), "client!"])(
    "refuse the subject type %j, with a message",
    (type) => {
      const refused = checkSubject("observation", type, "Acme");
      expect(refused).toMatchObject({ ok: false, code: "NORTH_SUBJECT_INVALID" });
      expect(!refused.ok && refused.message.trim()).not.toBe("");
    },
  );

  it("accept a subject type of 32 characters with digits, '-' and '_'", () => {
    const type = `counter-party_2${"x".repeat(17)}`;
    expect(checkSubject("observation", type, "Acme")).toEqual({
      ok: true,
      value: { type, id: "Acme" },
    });
  });

  it("accept an id of 200 code points and refuse 201", () => {
    expect(checkSubject("observation", "client", "😀".repeat(200))).toMatchObject({ ok: true });
    expect(checkSubject("observation", "client", "😀".repeat(201))).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_INVALID",
    });
  });

  it("accept every person type offered to the model as an example", () => {
    expect(PERSON_SUBJECT_TYPES.length).toBeGreaterThan(0);
    for (const type of PERSON_SUBJECT_TYPES) {
      expect(checkSubject("observation", type, "Acme")).toEqual({
        ok: true,
        value: { type, id: "Acme" },
      });
    }
  });
});

describe("checkSubjectLookup", () => {
  it("returns the checked subject", () => {
    expect(checkSubjectLookup("Client", " Acme ")).toEqual({
      ok: true,
      value: { type: "client", id: "Acme" },
    });
  });

  it("needs both fields when neither is sent", () => {
    expect(checkSubjectLookup(undefined, undefined)).toMatchObject({
      ok: false,
      code: "NORTH_SUBJECT_REQUIRED",
    });
    expect(subjectKeyOf(undefined, undefined)).toBeUndefined();
  });

  it("tells the model the id limit when the subject is malformed", () => {
    const refused = checkSubjectLookup("Not A Word!", "x");
    expect(refused).toMatchObject({ ok: false, code: "NORTH_SUBJECT_INVALID" });
    expect(!refused.ok && refused.message).toContain("200");
  });
});

describe("checkExpiryDays", () => {
  it("falls back to the default expiry when none is sent", () => {
    expect(checkExpiryDays(undefined)).toEqual({ ok: true, value: DEFAULT_MEMORY_EXPIRY_DAYS });
  });

  it.each([1, 30, MAX_MEMORY_EXPIRY_DAYS])("accepts %s days", (days) => {
    expect(checkExpiryDays(days)).toEqual({ ok: true, value: days });
  });

  it.each([0, -1, MAX_MEMORY_EXPIRY_DAYS + 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    "refuses %s days, stating the maximum",
    (days) => {
      const refused = checkExpiryDays(days);
      expect(refused).toMatchObject({ ok: false, code: "NORTH_EXPIRY_INVALID" });
      expect(!refused.ok && refused.message).toContain(String(MAX_MEMORY_EXPIRY_DAYS));
    },
  );
});

describe("checkConversationId", () => {
  it("accepts no conversation id", () => {
    expect(checkConversationId(undefined)).toEqual({ ok: true, value: undefined });
  });

  it.each(["a", "Conv-1.2:3_x", `c${"0".repeat(127)}`])("accepts %j as sent", (id) => {
    expect(checkConversationId(id)).toEqual({ ok: true, value: id });
  });

  it.each(["", "-leading", ".dot", "has space", "a/b", "é", `c${"0".repeat(128)}`])(
    "refuses %j, naming the field",
    (id) => {
      const refused = checkConversationId(id);
      expect(refused).toMatchObject({ ok: false, code: "NORTH_ID_INVALID" });
      expect(!refused.ok && refused.message).toContain("conversation_id");
    },
  );
});

describe("checkRecallQuery", () => {
  it("treats no query, and a query that sanitizes to nothing, as no query", () => {
    expect(checkRecallQuery(undefined)).toEqual({ ok: true, value: undefined });
    expect(checkRecallQuery(" \u0000\t ")).toEqual({ ok: true, value: undefined });
  });

  it("sanitizes a query as a line: controls dropped, newlines and runs of spaces collapsed", () => {
    expect(checkRecallQuery(" contrat\u0000 de\n\nbail  ")).toEqual({
      ok: true,
      value: "contrat de bail",
    });
  });

  it("accepts 1,000 characters counted as code points, and refuses 1,001", () => {
    const emoji = "😀".repeat(RECALL_QUERY_MAX_CHARS);
    expect(checkRecallQuery(emoji)).toEqual({ ok: true, value: emoji });
    const refused = checkRecallQuery(`${emoji}a`);
    expect(refused).toMatchObject({ ok: false, code: "NORTH_QUERY_TOO_LONG" });
    expect(!refused.ok && refused.message).toContain(String(RECALL_QUERY_MAX_CHARS + 1));
    expect(!refused.ok && refused.message).not.toContain("😀");
  });
});

describe("canonicalSubjectId (SPEC §5 subject matching)", () => {
  it.each([
    ["helene  DUBOIS", "Hélène Dubois"],
    ["HÉLÈNE\tdubois", "helene dubois"],
    ["Straße", "STRASSE"],
    ["ＡＣＭＥ", "acme"],
    ["Cafe\u0301", "Café"],
  ])("matches %j and %j", (a, b) => {
    expect(canonicalSubjectId(a)).toBe(canonicalSubjectId(b));
  });

  it("keeps different names apart", () => {
    expect(canonicalSubjectId("Hélène Dubois")).not.toBe(canonicalSubjectId("Helena Dubois"));
  });

  it("is idempotent", () => {
    const once = canonicalSubjectId(" Ｈélène\u200E  DUBOIS ");
    expect(canonicalSubjectId(once)).toBe(once);
    expect(once).toBe("helene dubois");
  });
});

describe("checkSubjectLookup, edges", () => {
  it("accepts a 200-character id without a type and refuses 201, saying why", () => {
    expect(checkSubjectLookup(undefined, "x".repeat(200))).toMatchObject({ ok: true });
    const refused = checkSubjectLookup(undefined, "x".repeat(201));
    expect(!refused.ok && refused.message).toContain("200");
  });

  it("names subject_id when it is missing", () => {
    const refused = checkSubjectLookup(undefined, "  ");
    expect(!refused.ok && refused.message).toContain("subject_id");
  });
});

describe("canonicalSubjectId, spacing left by folded accents", () => {
  it("collapses the spaces a dropped combining mark leaves, and trims what it uncovers", () => {
    expect(canonicalSubjectId("a \u0301 b")).toBe("a b");
    expect(canonicalSubjectId("\u0301 a")).toBe("a");
  });
});
