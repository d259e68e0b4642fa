/**
 * The one normalisation emails are compared after (SPEC §3a): surrounding ASCII whitespace
 * trimmed and the ASCII letters A–Z lower-cased — nothing else folded, so two addresses are equal
 * only when they are the same code points up to the case of A–Z, and a non-ASCII character never
 * equals an ASCII one. `lower()` and `toLowerCase()` map U+212A KELVIN SIGN onto "k", so a
 * look-alike IdP identity "\u212Aate@firm.example" matched the ASCII member "kate@firm.example".
 * There is deliberately no Unicode normalisation: NFC (and NFKC) map U+212A onto "K" too (and
 * U+2126 OHM SIGN, U+212B ANGSTROM SIGN onto the letters they look like). An address that an IdP
 * spells with another composition of the same accented letter does not match; that refusal is
 * the safe side.
 *
 * Defined once in TypeScript ({@link normalizeEmail}) and once in SQL
 * ({@link normalizedEmailSql}); a test holds the two equal over tricky inputs.
 */

const ASCII_SPACE_AT_ENDS = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;

/** An email in the form North compares it in (see the module comment). */
export function normalizeEmail(email: string): string {
  return email.replace(ASCII_SPACE_AT_ENDS, "").replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * The same normalisation as {@link normalizeEmail}, as a SQL expression over `expression` (a
 * column or parameter name), for definer-function bodies and queries.
 */
export function normalizedEmailSql(expression: string): string {
  return `pg_catalog.translate(pg_catalog.btrim(${expression}, E' \\t\\n\\x0B\\f\\r'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;
}
