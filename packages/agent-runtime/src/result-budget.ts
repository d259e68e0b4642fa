import type { Checked } from "./codes.ts";

/**
 * Bounded results (SPEC §3b). Claude Code 2.1.197 saves a tool result over 50,000 characters (or
 * 25,000 tokens) to a file and shows the model a 2 KB preview, so every result North sends stays
 * well below that, measured on what the host passes on: the JSON of `structuredContent`, where
 * every body appears once in the fenced `block` and, for the reads that return rows, once more
 * in the rows. A read that has more pages through a cursor and says so in a sentence.
 */

/** Characters of serialized `structuredContent` one paged read may send (≈ 8,000 tokens). */
export const RESULT_CHAR_BUDGET = 32_000;

/** Of the briefing's budget, the characters its working profile may take. */
export const BRIEFING_PROFILE_CHAR_BUDGET = 16_000;

/** Characters an item adds to a result's JSON: its text once JSON-encoded, plus a separator. */
export function jsonCost(value: unknown): number {
  return JSON.stringify(value).length + 1;
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

/**
 * A cursor: the position of the last item a page sent, opaque to the model. Positions are
 * keyset keys (a time and an id), so a page never repeats or skips an item that was already
 * there when the first page was read.
 */
export function encodeCursor(position: string): string {
  return Buffer.from(position, "utf8").toString("base64url");
}

/** Reads a cursor back; anything North did not write is refused with a sentence to recover. */
export function decodeCursor(cursor: string): Checked<string, "NORTH_CURSOR_INVALID"> {
  const position = /^[A-Za-z0-9_-]{1,400}$/.test(cursor)
    ? Buffer.from(cursor, "base64url").toString("utf8")
    : "";
  if (!/^\d{4}-\d\d-\d\dT[\d:.]+Z~[^~]+$/.test(position)) {
    return {
      ok: false,
      code: "NORTH_CURSOR_INVALID",
      message:
        "This cursor was not written by North. Send the next_cursor of the previous result as it was, or no cursor to start from the beginning.",
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
  const sorted = [...items].sort((a, b) => compare(position(a), position(b)));
  return cursor === undefined
    ? sorted
    : sorted.filter((item) => compare(position(item), cursor) > 0);
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
