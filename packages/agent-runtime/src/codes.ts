/**
 * Every `NORTH_…` code a tool can return. Literal types so that a store's result union and the
 * receipt the model reads are checked against the same list.
 */
export const NORTH_CODES = [
  "NORTH_QUESTION_EMPTY",
  "NORTH_QUESTION_TOO_LONG",
  "NORTH_ANSWER_EMPTY",
  "NORTH_ANSWER_TOO_LONG",
  "NORTH_ID_INVALID",
  "NORTH_ID_RESERVED",
  "NORTH_TARGET_MISSING",
  "NORTH_RATE_LIMITED",
  "NORTH_CONFLICT",
  "NORTH_BODY_EMPTY",
  "NORTH_BODY_TOO_LONG",
  "NORTH_SUBJECT_REQUIRED",
  "NORTH_SUBJECT_INVALID",
  "NORTH_EXPIRY_INVALID",
  "NORTH_QUERY_TOO_LONG",
  "NORTH_TIMEOUT",
  "NORTH_UNAVAILABLE",
  "NORTH_FORBIDDEN",
  "NORTH_NOT_FOUND",
  "NORTH_SUPERSEDES_INVALID",
  "NORTH_CURSOR_INVALID",
] as const;

export type NorthCode = (typeof NORTH_CODES)[number];

/** A refusal at the door: a literal code plus the sentence the model reads to recover. */
export interface Rejection<C extends NorthCode = NorthCode> {
  ok: false;
  code: C;
  message: string;
}

export type Checked<T, C extends NorthCode = NorthCode> = { ok: true; value: T } | Rejection<C>;
