import type { Checked } from "./codes.ts";
import { codePointLength, sanitizeBody, sanitizeLine } from "./sanitize.ts";

/** Memory rules with no I/O (SPEC §5): kinds, origins, subjects, expiry, bounds. */

export const MEMORY_KINDS = ["fact", "observation"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];
export const MEMORY_ORIGINS = ["stated", "inferred"] as const;
export type MemoryOrigin = (typeof MEMORY_ORIGINS)[number];

export const MEMORY_BODY_MAX_CHARS = 2_000;
export const DEFAULT_MEMORY_EXPIRY_DAYS = 90;
export const MAX_MEMORY_EXPIRY_DAYS = 365;
export const DEFAULT_RECALL_LIMIT = 5;
export const MAX_RECALL_LIMIT = 20;

/**
 * Subject types that name a person, offered to the model as examples. A subject is given as both
 * fields or neither; an observation always needs one.
 */
export const PERSON_SUBJECT_TYPES: readonly string[] = [
  "person",
  "client",
  "counterparty",
  "colleague",
  "contact",
  "witness",
  "judge",
  "lawyer",
  "expert",
];

const SUBJECT_TYPE = /^[a-z][a-z0-9_-]{0,31}$/;
const CONVERSATION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface Subject {
  type: string;
  id: string;
}

export const RECALL_QUERY_MAX_CHARS = 1_000;

/**
 * Sanitizes a recall query as a line and bounds it (SPEC §5: at most 1,000 characters), so a
 * caller cannot hand PostgreSQL an unbounded text search. Empty after sanitizing means "no query".
 */
export function checkRecallQuery(
  raw: string | undefined,
): Checked<string | undefined, "NORTH_QUERY_TOO_LONG"> {
  if (raw === undefined) return { ok: true, value: undefined };
  const value = sanitizeLine(raw);
  const length = codePointLength(value);
  if (length > RECALL_QUERY_MAX_CHARS) {
    return {
      ok: false,
      code: "NORTH_QUERY_TOO_LONG",
      message: `The query is ${length} characters; the limit is ${RECALL_QUERY_MAX_CHARS}. Use a few distinctive words.`,
    };
  }
  return { ok: true, value: value || undefined };
}

/** Sanitizes and bounds a memory body. */
export function checkMemoryBody(
  raw: string,
): Checked<string, "NORTH_BODY_EMPTY" | "NORTH_BODY_TOO_LONG"> {
  const value = sanitizeBody(raw);
  const length = codePointLength(value);
  if (length === 0) {
    return {
      ok: false,
      code: "NORTH_BODY_EMPTY",
      message: "The memory is empty. Nothing was saved.",
    };
  }
  if (length > MEMORY_BODY_MAX_CHARS) {
    return {
      ok: false,
      code: "NORTH_BODY_TOO_LONG",
      message: `The memory is ${length} characters; the limit is ${MEMORY_BODY_MAX_CHARS}. Keep one fact per memory and resend.`,
    };
  }
  return { ok: true, value };
}

/**
 * Checks a subject given as two optional fields. Both or neither; required for an observation
 * and for any subject type that names a person. Refused at the door, never defaulted.
 */
export function checkSubject(
  kind: MemoryKind,
  type: string | undefined,
  id: string | undefined,
): Checked<Subject | null, "NORTH_SUBJECT_REQUIRED" | "NORTH_SUBJECT_INVALID"> {
  const subjectType = type === undefined ? undefined : type.trim().toLowerCase();
  const subjectId = id === undefined ? undefined : sanitizeLine(id);
  const required = {
    ok: false as const,
    code: "NORTH_SUBJECT_REQUIRED" as const,
    message:
      "An observation, or a fact about a person, needs both subject_type (e.g. client, counterparty, colleague) and subject_id (who it is about). Nothing was saved.",
  };
  if (subjectType === undefined && subjectId === undefined) {
    return kind === "observation" ? required : { ok: true, value: null };
  }
  if (!subjectType || !subjectId) return required;
  if (!SUBJECT_TYPE.test(subjectType) || codePointLength(subjectId) > 200) {
    return {
      ok: false,
      code: "NORTH_SUBJECT_INVALID",
      message:
        "subject_type must be a short lowercase word (letters, digits, '-', '_'); subject_id at most 200 characters. Nothing was saved.",
    };
  }
  return { ok: true, value: { type: subjectType, id: subjectId } };
}

/** A subject named to look memories up: the type is optional (absent, every type matches). */
export interface SubjectLookup {
  type?: string;
  id: string;
}

/**
 * A subject named to look memories up (recall, held, forget): subject_id required; subject_type
 * optional — without it, every type matches (SPEC §5) — and checked as for a write when given.
 */
export function checkSubjectLookup(
  type: string | undefined,
  id: string | undefined,
): Checked<SubjectLookup, "NORTH_SUBJECT_REQUIRED" | "NORTH_SUBJECT_INVALID"> {
  const subjectId = id === undefined ? "" : sanitizeLine(id);
  if (!subjectId) {
    return {
      ok: false,
      code: "NORTH_SUBJECT_REQUIRED",
      message: "Send subject_id (and subject_type to narrow it to one kind of subject).",
    };
  }
  if (type === undefined) {
    return codePointLength(subjectId) > 200
      ? {
          ok: false,
          code: "NORTH_SUBJECT_INVALID",
          message: "subject_id is at most 200 characters.",
        }
      : { ok: true, value: { id: subjectId } };
  }
  const checked = checkSubject("observation", type, id);
  if (!checked.ok) {
    return {
      ...checked,
      message: "subject_type must be a short lowercase word; subject_id at most 200 characters.",
    };
  }
  // An observation's subject is never null once checked.
  return { ok: true, value: checked.value as Subject };
}

/** The canonical key of a subject given as raw fields, or undefined when they are not valid. */
export function subjectKeyOf(type: string | undefined, id: string | undefined): string | undefined {
  const checked = checkSubjectLookup(type, id);
  return checked.ok ? subjectKey(checked.value) : undefined;
}

/**
 * The canonical form subjects are matched on (SPEC §5): sanitized as a line, compatibility
 * normalised (NFKC), accents folded (decomposed, combining marks dropped), case-folded
 * (upper then lower, so "ß" and "SS" meet), whitespace collapsed. "helene  DUBOIS" and
 * "Hélène Dubois" have the same canonical form.
 */
export function canonicalSubjectId(id: string): string {
  return sanitizeLine(id)
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .normalize("NFKC")
    .toUpperCase()
    .toLowerCase()
    .replace(/\s+/gu, " ")
    .trim();
}

/**
 * The text a subject's keyed fingerprint is computed from: its canonical id. The type is kept
 * in clear beside it and filtered on separately, so a lookup without a type matches every type.
 */
export function subjectKey(subject: SubjectLookup): string {
  return canonicalSubjectId(subject.id);
}

export function checkExpiryDays(days: number | undefined): Checked<number, "NORTH_EXPIRY_INVALID"> {
  const value = days ?? DEFAULT_MEMORY_EXPIRY_DAYS;
  if (!Number.isInteger(value) || value < 1 || value > MAX_MEMORY_EXPIRY_DAYS) {
    return {
      ok: false,
      code: "NORTH_EXPIRY_INVALID",
      message: `expires_in_days must be a whole number from 1 to ${MAX_MEMORY_EXPIRY_DAYS} (default ${DEFAULT_MEMORY_EXPIRY_DAYS}). Nothing was saved.`,
    };
  }
  return { ok: true, value };
}

export function checkConversationId(
  id: string | undefined,
): Checked<string | undefined, "NORTH_ID_INVALID"> {
  if (id === undefined) return { ok: true, value: undefined };
  if (!CONVERSATION_ID.test(id)) {
    return {
      ok: false,
      code: "NORTH_ID_INVALID",
      message:
        "conversation_id must be 1–128 characters of letters, digits, '.', '_', ':' or '-'. Omit it to let North record this request.",
    };
  }
  return { ok: true, value: id };
}
