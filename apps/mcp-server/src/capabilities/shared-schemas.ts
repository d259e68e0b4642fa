import { LOCALES } from "@north/agent-runtime";
import { z } from "zod";

/**
 * Named field schemas reused across tools. Every `.describe()` is prompt text the model reads.
 * Bounds that have a `NORTH_…` code are checked by the store, not here, so the model gets a
 * typed receipt it can act on instead of a schema error.
 */

export const questionIdSchema = z
  .string()
  .describe(
    "Optional stable id for this question: 1–128 characters of letters, digits, '.', '_', ':' or '-', starting with a letter or digit. Use a bank id from suggested_questions when you asked that question, or an id North returned to you. Omit it for a question of your own: North derives one from the wording.",
  );

export const expectedVersionSchema = z
  .number()
  .int()
  .positive()
  .describe(
    "Only when correcting an existing entry: the answer_version you last read for this question_id. Omit it when saving a new answer.",
  );

export const localeSchema = z
  .enum(LOCALES)
  .describe("Language for bank wording and suggestions: 'en' (default) or 'fr'.");
