import type { Embedder } from "../tool-definition.ts";

/** A vector scaled to length 1, so a dot product is the cosine similarity. */
export function unitVector(vector: readonly number[]): number[] {
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

/**
 * How a vector's model is recorded beside it, `model@dimensions` (decision 020): the write path,
 * the query and the backfill all name a model the same way, so they compare like with like.
 */
export function embeddingModelKey(embedder: Pick<Embedder, "status">, dimensions: number): string {
  return `${embedder.status?.().model ?? "embedder"}@${dimensions}`;
}
