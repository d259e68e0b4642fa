/**
 * The embeddings provider (SPEC §5): an OpenAI-compatible endpoint behind North's `Embedder`
 * interface, with its failure classes named. The composition root builds it from
 * `NORTH_EMBEDDINGS_*`; nothing else reaches into this folder.
 */
export { type BackfillOptions, startEmbeddingBackfill } from "./backfill.ts";
export type { Admission, BreakerOptions, BreakerState } from "./breaker.ts";
export {
  createEmbeddingsProvider,
  EmbedderUnavailableError,
  type EmbeddingsProvider,
  type EmbeddingsProviderOptions,
} from "./provider.ts";
export type { EmbedFailure, EmbedResult } from "./request.ts";
export { embeddingModelKey, unitVector } from "./vectors.ts";
