import {
  type Database,
  ensureVectorIndex,
  memoriesToEmbed,
  setMemoryEmbedding,
  type VectorIndexOutcome,
} from "@north/db";
import type { Logger } from "../logger.ts";
import { describeError } from "../logger.ts";
import type { EmbeddingsProvider } from "./provider.ts";
import { embeddingModelKey, unitVector } from "./vectors.ts";

export interface BackfillOptions {
  /**
   * The maintenance login's pool (decision 031): the backfill's functions span organisations,
   * and the app role may not run them.
   */
  db: Database;
  provider: EmbeddingsProvider;
  logger: Logger;
  /** Milliseconds between rounds; 0 turns the backfill off. */
  intervalMs: number;
  /** Memories per round (one provider batch per `maxBatchSize` of them). */
  batch?: number;
}

/**
 * Embeds, in the background, the live memories that have no vector from the current model (SPEC
 * §5): those written while the provider failed, and all of them after a model change — so a
 * write never waits on a provider that is down, and switching models needs no command. A round
 * does nothing until the provider has answered once (its dimensions are known), and nothing
 * while it fails (its breaker refuses at once). Once a model's key is known, its first round
 * asks for the model's HNSW index where the server has pgvector (decision 028). Returns the stop
 * step.
 */
export function startEmbeddingBackfill(options: BackfillOptions): () => Promise<void> {
  if (options.intervalMs <= 0) return async () => {};
  let running: Promise<void> | null = null;
  const indexSettled = new Set<string>();
  const round = async () => {
    const { provider } = options;
    if (provider.dimensions === undefined) {
      // Learn the dimensions with one real call; a failure just waits for the next round.
      const probe = await provider.embedMany(["north"]);
      if (!probe.ok) return;
    }
    const model = embeddingModelKey(provider, provider.dimensions ?? 0);
    if (!indexSettled.has(model)) {
      // A failed request (say, provisioning not yet re-run) is logged and asked again next
      // round; it never keeps the memories from being embedded.
      const outcome = await ensureVectorIndex(options.db, model).catch((error) => {
        options.logger.error(describeError(error), "vector index request failed");
        return "busy" as const;
      });
      // `busy`: a lock was not had in time; the next round asks again.
      if (outcome !== "busy") indexSettled.add(model);
      logVectorIndex(options.logger, model, outcome);
    }
    const pending = await memoriesToEmbed(options.db, { model, limit: options.batch ?? 64 });
    if (pending.length === 0) return;
    const result = await provider.embedMany(pending.map((m) => m.body));
    if (!result.ok) return;
    let stored = 0;
    for (const [index, memory] of pending.entries()) {
      const vector = result.vectors[index];
      if (!vector) continue;
      if (
        await setMemoryEmbedding(options.db, {
          id: memory.id,
          embedding: unitVector(vector),
          model,
        })
      ) {
        stored += 1;
      }
    }
    options.logger.info({ embedder: { model }, embedded: stored }, "embeddings backfill");
  };
  const timer = setInterval(() => {
    if (running) return;
    running = round()
      .catch((error) => options.logger.error(describeError(error), "embeddings backfill failed"))
      .finally(() => {
        running = null;
      });
  }, options.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** One line per model and process: what became of its HNSW index, and what to do if anything. */
function logVectorIndex(logger: Logger, model: string, outcome: VectorIndexOutcome) {
  const fields = { embedder: { model }, vectorIndex: outcome };
  if (outcome === "deferred" || outcome === "invalid") {
    logger.warn(fields, "vector index needed: run north migrate to build it concurrently");
  } else if (outcome === "too-large") {
    logger.warn(
      fields,
      "model has too many dimensions for an HNSW index: recall compares without one",
    );
  } else {
    logger.info(fields, "vector index");
  }
}
