import { createHash } from "node:crypto";
import type { Checked } from "./codes.ts";

export const QUESTION_ID_MAX_CHARS = 128;
export const AUTO_ID_PREFIX = "auto:";

const EXPLICIT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const AUTO_ID = /^auto:[0-9a-f]{64}$/;

/**
 * How the key of a save was obtained. `caller-auto` is an `auto:` id the caller sent back: it may
 * only address a row that already exists, so the store never creates one from it.
 */
export type QuestionIdKind = "explicit" | "auto" | "caller-auto";

export interface ResolvedQuestionId {
  questionId: string;
  kind: QuestionIdKind;
}

/** `auto:` + lowercase hex SHA-256 of the sanitized question, exactly as stored. */
export function autoQuestionId(sanitizedQuestion: string): string {
  return AUTO_ID_PREFIX + createHash("sha256").update(sanitizedQuestion, "utf8").digest("hex");
}

/**
 * Validates a caller-sent question id, or derives the auto id when none was sent.
 * `sanitizedQuestion` must already have passed {@link checkQuestion}.
 */
export function resolveQuestionId(
  raw: string | undefined,
  sanitizedQuestion: string,
): Checked<ResolvedQuestionId, "NORTH_ID_INVALID" | "NORTH_ID_RESERVED"> {
  if (raw === undefined) {
    return { ok: true, value: { questionId: autoQuestionId(sanitizedQuestion), kind: "auto" } };
  }
  if (AUTO_ID.test(raw)) {
    return { ok: true, value: { questionId: raw, kind: "caller-auto" } };
  }
  if (/^auto:/i.test(raw)) {
    return {
      ok: false,
      code: "NORTH_ID_RESERVED",
      message:
        "Ids starting with auto: are assigned by North. Omit question_id to let North assign one, or send an id North returned to you.",
    };
  }
  if (!EXPLICIT_ID.test(raw)) {
    return {
      ok: false,
      code: "NORTH_ID_INVALID",
      message:
        "question_id must be 1–128 characters of letters, digits, '.', '_', ':' or '-', starting with a letter or digit. Omit it to let North assign one.",
    };
  }
  return { ok: true, value: { questionId: raw, kind: "explicit" } };
}
