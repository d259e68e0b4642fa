import {
  DEFAULT_MEMORY_EXPIRY_DAYS,
  MAX_MEMORY_EXPIRY_DAYS,
  REMEMBER_TOOL,
  sanitizeBody,
  subjectKey,
  subjectKeyOf,
  TOOL_RULES,
} from "@north/agent-runtime";
import { MAX_SUPERSEDES, rememberMemory } from "@north/db";
import { z } from "zod";
import { embeddingModelKey } from "../../embeddings/index.ts";
import type { ToolDefinition } from "../../tool-definition.ts";
import { IDEMPOTENT_WRITE_ANNOTATIONS } from "../annotations.ts";
import type { MemoryDeps } from "./deps.ts";
import { MATTER_UNAVAILABLE, matterSchema, resolveMatter } from "./matter.ts";
import {
  embedOne,
  kindSchema,
  originSchema,
  subjectIdSchema,
  subjectTypeSchema,
} from "./schemas.ts";

const inputSchema = z.object({
  kind: kindSchema,
  body: z
    .string()
    .describe(
      "The memory itself, one fact, at most 2,000 characters. Plain words, no instructions.",
    ),
  origin: originSchema,
  subject_type: subjectTypeSchema.optional(),
  subject_id: subjectIdSchema.optional(),
  expires_in_days: z
    .number()
    .int()
    .min(1)
    .max(MAX_MEMORY_EXPIRY_DAYS)
    .optional()
    .describe(
      `Days until it expires: 1–${MAX_MEMORY_EXPIRY_DAYS}, default ${DEFAULT_MEMORY_EXPIRY_DAYS}. Expired memories are never recalled and are purged.`,
    ),
  conversation_id: z
    .string()
    .optional()
    .describe("Optional id of this conversation, recorded as the run that wrote the memory."),
  supersedes: z
    .array(z.string().max(64))
    .max(MAX_SUPERSEDES)
    .optional()
    .describe(
      `Ids of memories this one replaces because they are now wrong or out of date (at most ${MAX_SUPERSEDES}, from north__memory_recall or north__memory_held). They stop being recalled; north__memory_held still lists them with what replaced them.`,
    ),
  matter: matterSchema.optional(),
});

const outputSchema = z.object({
  outcome: z
    .enum(["created", "noop", "rejected"])
    .describe(
      "created: stored. noop: the same memory was already held (a retry); memory_id is that one. rejected: nothing stored; see code and message.",
    ),
  memory_id: z.string().nullable(),
  expires_at: z.string().nullable().describe("ISO 8601 expiry."),
  superseded: z
    .array(z.string())
    .optional()
    .describe("The memories this one replaced (created only)."),
  code: z.string().optional(),
  message: z.string().optional(),
  retry_after_s: z.number().int().optional(),
});

/** `north__memory_remember`, built with the embedder that gives a new memory its vector. */
export const createRememberTool = ({ embedder }: Pick<MemoryDeps, "embedder">) =>
  ({
    name: REMEMBER_TOOL,
    title: "Remember for the workspace",
    description: [
      "Stores one memory for the whole workspace, so the next colleague's assistant knows it too.",
      "Use it for durable knowledge worth reusing, one fact per memory: operational facts, or observations about a named person.",
      "Every observation, and any fact about a person, needs subject_type and subject_id: never guess them; ask the lawyer when unsure.",
      "Say 'stated' only when a lawyer said it; 'inferred' when you concluded it: an inference is never recorded as something anyone said.",
      TOOL_RULES.specialCategories,
      "Memories expire (90 days by default) and are visible to every member of the workspace, except a matter's: with matter (the lawyer named the client's matter or its number), the memory belongs to that matter and is recalled only with it named, never to a colleague screened from it.",
      "Returns the memory id and its expiry; rejected means nothing was stored and the message says what to fix. Retrying is safe: the same memory sent again within a day answers noop with the id already held. To take something back, call north__memory_forget.",
      TOOL_RULES.honesty,
    ].join(" "),
    kind: "write",
    callsOut: embedder !== undefined,
    inputSchema,
    outputSchema,
    annotations: IDEMPOTENT_WRITE_ANNOTATIONS,
    auditTarget: (input) => subjectKeyOf(input.subject_type, input.subject_id),
    refusalReceipt: (_input, refusal) => ({
      outcome: "rejected",
      memory_id: null,
      expires_at: null,
      ...refusal,
    }),
    async handler(input, ctx) {
      const resolved = await resolveMatter(ctx, input.matter);
      if (!resolved.ok) {
        return {
          ...resolved.refusal,
          structured: {
            outcome: "rejected",
            memory_id: null,
            expires_at: null,
            ...MATTER_UNAVAILABLE,
          },
        };
      }
      const body = sanitizeBody(input.body);
      const embedding = embedder && body ? await embedOne(embedder, body) : undefined;
      const result = await rememberMemory(ctx.tx, {
        author: ctx.tenant,
        kind: input.kind,
        body: input.body,
        origin: input.origin,
        subjectType: input.subject_type,
        subjectId: input.subject_id,
        expiresInDays: input.expires_in_days,
        conversationId: input.conversation_id,
        runId: ctx.runId,
        fingerprint: ctx.fingerprintSubject,
        embedding,
        embeddingModel:
          embedder && embedding ? embeddingModelKey(embedder, embedding.length) : undefined,
        supersedes: input.supersedes,
        matterId: resolved.matter?.id,
      });
      if (result.outcome === "rejected") {
        return {
          structured: {
            outcome: "rejected",
            memory_id: null,
            expires_at: null,
            code: result.code,
            message: result.message,
          },
          text: `rejected: ${result.code}. ${result.message}`,
          isError: true,
          audit: { outcome: "rejected" },
        };
      }
      const expiresAt = new Date(result.expiresAt).toISOString();
      const outcome = result.outcome;
      const superseded = result.outcome === "created" ? result.superseded : [];
      return {
        structured: {
          outcome,
          memory_id: result.memoryId,
          expires_at: expiresAt,
          ...(superseded.length > 0 ? { superseded } : {}),
        },
        text:
          outcome === "noop"
            ? `noop: already held, memory_id=${result.memoryId} expires_at=${expiresAt}; nothing new was stored`
            : `created: memory_id=${result.memoryId} expires_at=${expiresAt}${
                superseded.length > 0 ? `; it replaces ${superseded.join(", ")}` : ""
              }`,
        audit: {
          outcome,
          target: result.subject ? subjectKey(result.subject) : undefined,
        },
      };
    },
  }) satisfies ToolDefinition<typeof inputSchema, typeof outputSchema>;
