/**
 * Free-text sanitizing shared by every write (SPEC §4): answers, questions and memory bodies.
 *
 * Order matters for idempotence: characters are dropped first and NFC runs afterwards, because
 * dropping a control character that sat between a base letter and a combining mark would
 * otherwise leave a string that a second pass composes differently.
 */

const CONTROL = /\p{Cc}/gu;
/** Bidi overrides and isolates, and the bidi marks (LRM, RLM, ALM): never needed in our text. */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;
/**
 * Unicode tag characters (U+E0000–U+E007F): invisible, yet a model reads them as text, so they
 * could carry instructions a lawyer reviewing the text cannot see ("ASCII smuggling"). Their one
 * legitimate use, subdivision flags such as England's, degrades to the black flag.
 */
const TAG_CHARACTER = /[\u{E0000}-\u{E007F}]/gu;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** CRLF, CR, and the Unicode line and paragraph separators all become `\n`. */
const LINE_BREAK = /\r\n?|[\u2028\u2029]/g;

function dropUnsafe(input: string, keepNewlines: boolean): string {
  const unified = input.replace(LONE_SURROGATE, "").replace(LINE_BREAK, "\n");
  const spaced = keepNewlines ? unified.replace(/\t/g, " ") : unified.replace(/[\n\t]/g, " ");
  return spaced
    .replace(CONTROL, (c) => (c === "\n" ? c : ""))
    .replace(BIDI_CONTROL, "")
    .replace(TAG_CHARACTER, "");
}

/**
 * Sanitizes a single line (a question): newlines and tabs become spaces, runs of whitespace
 * collapse to one space, and the ends are trimmed.
 */
export function sanitizeLine(input: string): string {
  return dropUnsafe(input, false).normalize("NFC").replace(/\s+/gu, " ").trim();
}

/**
 * Sanitizes a body (an answer, a memory): keeps `\n` (after `\r\n`/`\r` become `\n`), turns tabs
 * into spaces, and trims the ends. Inner spacing is the author's and is kept.
 */
export function sanitizeBody(input: string): string {
  return dropUnsafe(input, true).normalize("NFC").trim();
}

/** Length in Unicode code points, the unit PostgreSQL's `char_length` counts in UTF-8. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}
