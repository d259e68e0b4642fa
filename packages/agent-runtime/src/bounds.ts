import type { Checked } from "./codes.ts";
import { codePointLength, sanitizeBody, sanitizeLine } from "./sanitize.ts";

export const QUESTION_MAX_CHARS = 500;
export const ANSWER_MAX_CHARS = 10_000;

/** Sanitizes a question and checks its bounds. Over-long text is refused, never truncated. */
export function checkQuestion(
  raw: string,
): Checked<string, "NORTH_QUESTION_EMPTY" | "NORTH_QUESTION_TOO_LONG"> {
  const value = sanitizeLine(raw);
  const length = codePointLength(value);
  if (length === 0) {
    return {
      ok: false,
      code: "NORTH_QUESTION_EMPTY",
      message: "The question is empty. Send the wording you actually asked the lawyer.",
    };
  }
  if (length > QUESTION_MAX_CHARS) {
    return {
      ok: false,
      code: "NORTH_QUESTION_TOO_LONG",
      message: `The question is ${length} characters; the limit is ${QUESTION_MAX_CHARS}. Shorten the wording and resend.`,
    };
  }
  return { ok: true, value };
}

/** Sanitizes an answer and checks its bounds. Over-long text is refused, never truncated. */
export function checkAnswer(
  raw: string,
): Checked<string, "NORTH_ANSWER_EMPTY" | "NORTH_ANSWER_TOO_LONG"> {
  const value = sanitizeBody(raw);
  const length = codePointLength(value);
  if (length === 0) {
    return {
      ok: false,
      code: "NORTH_ANSWER_EMPTY",
      message: "The answer is empty. Save only what the lawyer actually said, or save nothing.",
    };
  }
  if (length > ANSWER_MAX_CHARS) {
    return {
      ok: false,
      code: "NORTH_ANSWER_TOO_LONG",
      message: `The answer is ${length} characters; the limit is ${ANSWER_MAX_CHARS}. Summarise it in the lawyer's terms and resend.`,
    };
  }
  return { ok: true, value };
}
