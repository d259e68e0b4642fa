import { createHash } from "node:crypto";
import type { Checked } from "./codes.ts";

/**
 * Bounded results (SPEC §3b). Claude Code 2.1.197 saves a tool result over 50,000 characters (or
 * 25,000 tokens) to a file and shows the model a 2 KB preview, so every result North sends stays
 * well below that, measured on what the host passes on: the JSON of `structuredContent`, where
 * every body appears once in the fenced `block` and, for the reads that return rows, once more
 * in the rows. A read that has more pages through a cursor and says so in a sentence.
 */

/**
 * What one paged read packs its items into, in {@link jsonCost} units: at most 32,000 characters
 * of serialized `structuredContent`, and fewer tokens than Claude Code's 25,000 even where text
 * is a token a character (CJK, stacked combining marks).
 */
export const RESULT_CHAR_BUDGET = 32_000;

/**
 * What one item alone may cost before it is cut: a page's single entry may pass the packing
 * budget (a long answer in a script of a token a character still reads whole), but never the
 * host's limits (50,000 characters, 25,000 tokens).
 */
export const ITEM_CEILING = 44_000;

/** The same ceiling for the briefing's profile, which shares its result with the memories. */
export const BRIEFING_ITEM_CEILING = 28_000;

/** Of the briefing's budget, the characters its working profile may take. */
export const BRIEFING_PROFILE_CHAR_BUDGET = 16_000;

/**
 * What an item adds to a result, in budget units: the characters of its JSON (plus a separator),
 * and one more for each non-ASCII one, so a budget holds for tokens as well as characters (ASCII
 * text runs about four characters a token; other scripts and marks about one a character).
 */
export function jsonCost(value: unknown): number {
  if (typeof value === "string") return jsonStringCost(value);
  const json = JSON.stringify(value) ?? "";
  let nonAscii = 0;
  for (let i = 0; i < json.length; i++) if (json.charCodeAt(i) > 0x7f) nonAscii++;
  return json.length + nonAscii + 1;
}

/** The short escapes JSON writes for control characters (`\b \t \n \f \r`); others are `\u00XX`. */
const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/**
 * {@link jsonCost} of a string, counted as `JSON.stringify` would write it but without writing it
 * (a read costs every fenced line this way): quotes and backslashes take two characters, control
 * characters two or six, a lone surrogate six (`\uXXXX`, ASCII), anything else its own code
 * units, each non-ASCII one twice. A test holds it equal to the general count.
 */
function jsonStringCost(text: string): number {
  let cost = 3; // the quotes and the separator
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) cost += SHORT_ESCAPES.has(c) ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) cost += 2;
    else if (c < 0x80) cost += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        cost += 4;
        i++;
      } else cost += 6;
    } else if (c >= 0xdc00 && c <= 0xdfff) cost += 6;
    else cost += 2;
  }
  return cost;
}

/**
 * The longest prefix of `text` (whole code points) for which `cost(prefix)` fits `budget`, for
 * the one item of a page that does not fit even alone. Never empty when `text` is not.
 */
export function cutToFit(text: string, cost: (prefix: string) => number, budget: number): string {
  const points = [...text];
  let low = 1;
  let high = points.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (cost(points.slice(0, middle).join("")) <= budget) low = middle;
    else high = middle - 1;
  }
  return points.slice(0, low).join("");
}

/**
 * The longest prefix of `items` whose summed `cost` fits `budget`. At least one item is kept
 * when there is one (a single item larger than the budget still reads, on its own page; every
 * item is bounded by its own write limit), so paging always moves forward.
 */
export function takeWithin<T>(
  items: readonly T[],
  cost: (item: T) => number,
  budget: number,
): { included: T[]; leftOut: number } {
  let used = 0;
  let count = 0;
  for (const item of items) {
    const next = cost(item);
    if (count > 0 && used + next > budget) break;
    used += next;
    count += 1;
  }
  return { included: items.slice(0, count), leftOut: items.length - count };
}

/** A listing's tag: which listing a cursor belongs to, without saying what it lists. */
const tagOf = (listing: string) =>
  createHash("sha256").update(listing, "utf8").digest("base64url").slice(0, 12);

/**
 * A cursor: the position of the last item a page sent, opaque to the model, bound to its
 * listing (`listing` names the tool and, for a subject's listing, the subject's fingerprint), so
 * a cursor of one listing never silently skips rows of another. Positions are keyset keys (a
 * time and an id), so a page never repeats or skips an item that was already there when the
 * first page was read.
 */
export function encodeCursor(listing: string, position: string): string {
  return Buffer.from(`${tagOf(listing)}|${position}`, "utf8").toString("base64url");
}

/**
 * Reads a cursor of `listing` back; anything North did not write for this listing is refused
 * with a sentence to recover.
 */
export function decodeCursor(
  cursor: string,
  listing: string,
): Checked<string, "NORTH_CURSOR_INVALID"> {
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(cursor)
    ? Buffer.from(cursor, "base64url").toString("utf8")
    : "";
  const bar = decoded.indexOf("|");
  const tag = decoded.slice(0, Math.max(bar, 0));
  const position = decoded.slice(bar + 1);
  if (tag !== tagOf(listing) || !/^\d{4}-\d\d-\d\dT[\d:.]+Z~[^~|]+$/.test(position)) {
    return {
      ok: false,
      code: "NORTH_CURSOR_INVALID",
      message:
        "This cursor was not written by North for this listing. Send the next_cursor of the previous result as it was, with the same arguments, or no cursor to start from the beginning.",
    };
  }
  return { ok: true, value: position };
}

/** A row's keyset position: its creation time, then its id (which never holds `~`). */
export function positionOf(createdAt: Date, id: string): string {
  return `${createdAt.toISOString()}~${id}`;
}

/**
 * `items` in keyset order (ascending or descending by {@link positionOf}), then those after
 * `cursor` (a decoded position; none: from the start).
 */
export function pageAfter<T>(
  items: readonly T[],
  position: (item: T) => string,
  order: "asc" | "desc",
  cursor?: string,
): T[] {
  const sign = order === "asc" ? 1 : -1;
  const compare = (a: string, b: string) => sign * (a < b ? -1 : a > b ? 1 : 0);
  // Each position is computed once, not once per comparison.
  const keyed = items.map((item) => ({ item, key: position(item) }));
  keyed.sort((a, b) => compare(a.key, b.key));
  const after = cursor === undefined ? keyed : keyed.filter(({ key }) => compare(key, cursor) > 0);
  return after.map(({ item }) => item);
}

/** The sentence that ends a result with more to read: how many, and the call that reads them. */
export function leftOutSentence(
  leftOut: number,
  what: string,
  call: string,
  cursor: string,
): string {
  return `${leftOut} more ${what} left out to keep this result small: call ${call} with cursor "${cursor}" to read them.`;
}
