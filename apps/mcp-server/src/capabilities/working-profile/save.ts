import { DISCLOSURE, SAVE_TOOL, TOOL_RULES } from "@north/agent-runtime";
import { type SaveAnswerResult, saveAnswer } from "@north/db";
import { z } from "zod";
import type { ToolDefinition } from "../../tool-definition.ts";
import { IDEMPOTENT_WRITE_ANNOTATIONS } from "../annotations.ts";
import { expectedVersionSchema, questionIdSchema } from "../shared-schemas.ts";

const inputSchema = z.object({
  question: z
    .string()
    .describe(
      "The question exactly as you asked it in this conversation (one line, at most 500 characters). Required for every save.",
    ),
  question_id: questionIdSchema.optional(),
  answer: z
    .string()
    .describe(
      "Your transcription of what the lawyer said (1–10,000 characters). Never invent or embellish; 'I don't know' is saved as the lawyer's own uncertainty.",
    ),
  expected_version: expectedVersionSchema.optional(),
});

const outputSchema = z.object({
  outcome: z
    .enum(["created", "updated", "noop", "conflict", "rejected"])
    .describe(
      "created / updated: saved. noop: already saved exactly so. conflict: the entry changed; re-read and resend with expected_version. rejected: nothing saved; see code and message.",
    ),
  question_id: z
    .string()
    .nullable()
    .describe("The entry's id; null when the save was refused before one was known."),
  answer_version: z
    .number()
    .int()
    .nullable()
    .describe("The entry's current version, when it exists."),
  code: z.string().optional().describe("NORTH_… code for rejected and conflict outcomes."),
  message: z.string().optional().describe("What to do next, in plain words."),
  retry_after_s: z.number().int().optional().describe("For NORTH_RATE_LIMITED: seconds to wait."),
});

type Receipt = z.output<typeof outputSchema>;

/**
 * What to do after a conflict, which depends on what was sent: without expected_version the
 * caller never read the entry, so "it changed since you read it" would be false.
 */
function conflictMessage(expectedVersion: number | undefined): string {
  return expectedVersion === undefined
    ? "An entry already exists under this question_id with a different question or answer. Read it with north__working_profile, then, if the lawyer wants it changed, resend with expected_version set to the answer_version you read."
    : "This entry changed since you read it. Call north__working_profile, then resend with expected_version set to the answer_version you read.";
}

function toReceipt(result: SaveAnswerResult, expectedVersion: number | undefined): Receipt {
  switch (result.outcome) {
    case "created":
    case "updated":
    case "noop":
      return {
        outcome: result.outcome,
        question_id: result.questionId,
        answer_version: result.answerVersion,
      };
    case "conflict":
      return {
        outcome: "conflict",
        question_id: result.questionId,
        answer_version: result.answerVersion,
        code: result.code,
        message: conflictMessage(expectedVersion),
      };
    case "rejected":
      return {
        outcome: "rejected",
        question_id: result.questionId ?? null,
        answer_version: null,
        code: result.code,
        message: result.message,
      };
  }
}

/** The one-line rendering of a receipt: outcome, id, version and, for refusals, what to do. */
function renderReceipt(receipt: Receipt): string {
  const head = `${receipt.outcome}: question_id=${receipt.question_id ?? "none"} answer_version=${receipt.answer_version ?? "none"}`;
  return receipt.code ? `${head} ${receipt.code}. ${receipt.message ?? ""}`.trim() : head;
}

export const saveWorkingProfileAnswer = {
  name: SAVE_TOOL,
  title: "Save working-profile answer",
  description: [
    "Saves one answer to the lawyer's working profile, right after they give it: during onboarding, when they talk about how they work, or after a follow-up question once you finish a piece of work.",
    "Send the question with the wording you actually asked (a bank question reworded, or your own custom question) and the answer as the lawyer gave it; one question at a time.",
    `Before the first save in a conversation, tell the lawyer that ${DISCLOSURE}.`,
    "Never invent an answer: \"I don't know\" is saved as the lawyer's own uncertainty, or not at all.",
    "Returns a receipt: created, updated or noop mean it is saved; conflict means re-read with north__working_profile and resend with expected_version; rejected means nothing was saved, and the message says why.",
    TOOL_RULES.honesty,
    TOOL_RULES.specialCategories,
    "If the lawyer skips, stops or postpones, save nothing and do not ask again in this conversation.",
  ].join(" "),
  kind: "write",
  inputSchema,
  outputSchema,
  annotations: IDEMPOTENT_WRITE_ANNOTATIONS,
  auditTarget: (input) => input.question_id,
  refusalReceipt: (input, refusal) => ({
    outcome: "rejected",
    question_id: input.question_id ?? null,
    answer_version: null,
    ...refusal,
  }),
  async handler(input, ctx) {
    const result = await saveAnswer(ctx.tx, {
      owner: ctx.tenant,
      question: input.question,
      answer: input.answer,
      questionId: input.question_id,
      expectedVersion: input.expected_version,
    });
    const receipt = toReceipt(result, input.expected_version);
    return {
      structured: receipt,
      text: renderReceipt(receipt),
      isError: receipt.outcome === "rejected" || receipt.outcome === "conflict",
      audit: { outcome: receipt.outcome, target: receipt.question_id ?? input.question_id },
    };
  },
} satisfies ToolDefinition<typeof inputSchema, typeof outputSchema>;
