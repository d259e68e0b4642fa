import { MEMORY_KINDS, MEMORY_ORIGINS, PERSON_SUBJECT_TYPES } from "@north/agent-runtime";
import { z } from "zod";
import { EmbedderUnavailableError, unitVector } from "../../embeddings/index.ts";

import type { Embedder, EmbedderFailureClass } from "../../tool-definition.ts";

export const subjectTypeSchema = z
  .string()
  .describe(
    `What kind of subject the memory is about, as a short lowercase word: for people ${PERSON_SUBJECT_TYPES.slice(0, 5).join(", ")}…; for other things e.g. court, matter. Required with subject_id for every observation and for anything about a person.`,
  );

export const subjectIdSchema = z
  .string()
  .describe(
    "Who or what exactly: a name or a stable reference (e.g. 'Acme SAS', 'client:1042'). Required with subject_type.",
  );

/** The subject fields of the lookup tools (recall, held, forget): no write-time rule. */
export const subjectLookupTypeSchema = z
  .string()
  .describe(
    `Optional: narrows the lookup to one kind of subject, e.g. ${PERSON_SUBJECT_TYPES.slice(0, 4).join(", ")}, court, matter. Without it, every kind matches.`,
  );

export const subjectLookupIdSchema = z
  .string()
  .describe(
    "The name or reference to look up (e.g. 'Acme SAS'); case, accents and spacing do not need to match exactly.",
  );

export const kindSchema = z
  .enum(MEMORY_KINDS)
  .describe(
    "'fact': operational knowledge (how filings go, which judge sits where). 'observation': something about a named person (client, counterparty, colleague).",
  );

export const originSchema = z
  .enum(MEMORY_ORIGINS)
  .describe(
    "'stated': a lawyer said it. 'inferred': you concluded it. Never mark an inference as stated.",
  );

/** A memory as metadata, without its body: bodies reach the model only inside a fenced block. */
export const memoryMetaSchema = z.object({
  memory_id: z.string(),
  matter: z
    .string()
    .nullable()
    .describe("The matter it belongs to (its reference), or null for a firm-wide memory."),
  kind: z.enum(MEMORY_KINDS),
  origin: z.enum(MEMORY_ORIGINS),
  subject_type: z.string().nullable(),
  subject_id: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
});

/**
 * A unit vector, so that a dot product is the cosine similarity; undefined when the embeddings
 * provider fails (SPEC §5: the memory is stored without one, recall falls back to full text).
 */
export async function embedOne(embedder: Embedder, text: string): Promise<number[] | undefined> {
  const result = await embedText(embedder, text);
  return "vector" in result ? result.vector : undefined;
}

/**
 * The same, saying why there is no vector: the provider's failure class (SPEC §5), which recall
 * reports as `degraded` and the ledger records.
 */
export async function embedText(
  embedder: Embedder,
  text: string,
): Promise<{ vector: number[] } | { failure: EmbedderFailureClass }> {
  let vectors: number[][];
  try {
    vectors = await embedder.embed([text]);
  } catch (error) {
    if (error instanceof EmbedderUnavailableError) return { failure: error.failureClass };
    throw error;
  }
  const [vector] = vectors;
  if (!vector || vector.length === 0) throw new Error("the embedder returned no vector");
  return { vector: unitVector(vector) };
}
