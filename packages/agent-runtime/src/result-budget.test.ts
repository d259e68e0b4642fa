import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  cutToFit,
  decodeCursor,
  encodeCursor,
  jsonCost,
  leftOutSentence,
  pageAfter,
  positionOf,
  takeWithin,
} from "./result-budget.ts";

describe("jsonCost", () => {
  it("counts the JSON's characters and a separator for ASCII", () => {
    expect(jsonCost("abc")).toBe('"abc"'.length + 1);
    expect(jsonCost({ a: 1 })).toBe('{"a":1}'.length + 1);
  });

  it("counts escapes as the JSON writes them", () => {
    expect(jsonCost('"\\')).toBe('"\\"\\\\"'.length + 1);
  });

  it("weighs each non-ASCII character twice (about a token each)", () => {
    expect(jsonCost("é")).toBe('"é"'.length + 1 + 1);
    expect(jsonCost("日本")).toBe('"日本"'.length + 2 + 1);
  });

  it("counts a string exactly as its JSON would, whatever it holds", () => {
    const general = (text: string) => {
      const json = JSON.stringify(text);
      let nonAscii = 0;
      for (let i = 0; i < json.length; i++) if (json.charCodeAt(i) > 0x7f) nonAscii++;
      return json.length + nonAscii + 1;
    };
    for (const text of [
      "",
      "\u0000\u001f\b\t\n\f\r",
      "\ud83d\ude00",
      "\ud83d",
      "\ude00x",
      "é\u2028<",
    ]) {
      expect(jsonCost(text), JSON.stringify(text)).toBe(general(text));
    }
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => jsonCost(text) === general(text)),
      { numRuns: 2000 },
    );
  });

  it("costs nothing more than a separator for undefined", () => {
    expect(jsonCost(undefined)).toBe(1);
  });
});

describe("takeWithin", () => {
  const cost = (n: number) => n;

  it("keeps the longest prefix whose costs fit, and counts the rest", () => {
    expect(takeWithin([3, 3, 3], cost, 6)).toEqual({ included: [3, 3], leftOut: 1 });
    expect(takeWithin([3, 3, 3], cost, 5)).toEqual({ included: [3], leftOut: 2 });
  });

  it("keeps a first item larger than the budget, so paging moves forward", () => {
    expect(takeWithin([9, 1], cost, 5)).toEqual({ included: [9], leftOut: 1 });
  });

  it("keeps everything that fits exactly, and nothing from an empty list", () => {
    expect(takeWithin([2, 3], cost, 5)).toEqual({ included: [2, 3], leftOut: 0 });
    expect(takeWithin([], cost, 5)).toEqual({ included: [], leftOut: 0 });
  });
});

describe("cutToFit", () => {
  const length = (prefix: string) => prefix.length;

  it("keeps the longest prefix that fits", () => {
    expect(cutToFit("abcdef", length, 4)).toBe("abcd");
    expect(cutToFit("abcdef", length, 6)).toBe("abcdef");
    expect(cutToFit("abcdef", length, 5)).toBe("abcde");
  });

  it("cuts between code points, never inside a surrogate pair", () => {
    expect(cutToFit("😀😀😀", length, 5)).toBe("😀😀");
  });

  it("keeps one code point even when nothing fits", () => {
    expect(cutToFit("abc", length, 0)).toBe("a");
  });
});

describe("cursors", () => {
  const position = positionOf(new Date("2026-11-30T10:00:00.123Z"), "q-1");

  it("read back the position they were written with, for their listing", () => {
    expect(position).toBe("2026-11-30T10:00:00.123Z~q-1");
    const cursor = encodeCursor("profile", position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, "profile")).toEqual({ ok: true, value: position });
  });

  it("are refused for another listing, with a sentence to recover", () => {
    const refused = decodeCursor(encodeCursor("held:a", position), "held:b");
    expect(refused).toMatchObject({ ok: false, code: "NORTH_CURSOR_INVALID" });
    expect(refused.ok ? "" : refused.message).toMatch(/next_cursor/);
  });

  it("are refused when North did not write them", () => {
    const tagged = (text: string) => encodeCursor("profile", text).slice(0, 16);
    for (const cursor of [
      "",
      "not a cursor",
      "x".repeat(401),
      Buffer.from(position).toString("base64url"),
      encodeCursor("profile", "2026-11-30~q-1"),
      encodeCursor("profile", "2026-11-30T10:00:00.123Z~"),
      encodeCursor("profile", "2026-11-30T10:00:00.123Z~a~b"),
      encodeCursor("profile", "2026-11-30T10:00:00.123Z~a|b"),
      encodeCursor("profile", `x${position}`),
      tagged(position),
    ]) {
      expect(decodeCursor(cursor, "profile"), cursor).toMatchObject({ ok: false });
    }
  });

  it("accept the longest cursor the limit allows, and not one character more", () => {
    const longest = encodeCursor("profile", `${position}${"a".repeat(250)}`);
    expect(longest.length).toBeLessThanOrEqual(400);
    expect(decodeCursor(longest, "profile")).toMatchObject({ ok: true });
    expect(decodeCursor(`${longest}${"A".repeat(401 - longest.length)}`, "profile")).toMatchObject({
      ok: false,
    });
  });
});

describe("pageAfter", () => {
  const rows = ["b", "a", "c"].map((id) => ({ id, at: new Date("2026-01-01T00:00:00.000Z") }));
  const key = (row: { id: string; at: Date }) => positionOf(row.at, row.id);

  it("sorts by position, ascending or descending", () => {
    expect(pageAfter(rows, key, "asc").map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect(pageAfter(rows, key, "desc").map((r) => r.id)).toEqual(["c", "b", "a"]);
  });

  it("starts after the cursor's position in either order", () => {
    const b = positionOf(new Date("2026-01-01T00:00:00.000Z"), "b");
    expect(pageAfter(rows, key, "asc", b).map((r) => r.id)).toEqual(["c"]);
    expect(pageAfter(rows, key, "desc", b).map((r) => r.id)).toEqual(["a"]);
  });

  it("keeps rows with equal positions out of the next page only when the cursor is past them", () => {
    const twins = [rows[0], rows[0]].filter((r) => r !== undefined);
    expect(pageAfter(twins, key, "asc", key(twins[0] as (typeof rows)[0]))).toEqual([]);
  });
});

describe("leftOutSentence", () => {
  it("says how many, what, and the exact call with its cursor", () => {
    expect(leftOutSentence(3, "entries were", "north__working_profile", "abc")).toBe(
      '3 more entries were left out to keep this result small: call north__working_profile with cursor "abc" to read them.',
    );
  });
});
