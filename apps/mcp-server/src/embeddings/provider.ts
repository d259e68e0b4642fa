import { readFileSync } from "node:fs";
import type { Logger } from "../logger.ts";
import type { Embedder, EmbedderFailureClass, EmbedderStatus } from "../tool-definition.ts";
import { type BreakerOptions, createBreaker } from "./breaker.ts";
import {
  type EmbedFailure,
  type EmbedResult,
  embeddingsEndpoint,
  requestEmbeddings,
} from "./request.ts";

export interface EmbeddingsProviderOptions {
  /**
   * Base URL of an OpenAI-compatible API (`NORTH_EMBEDDINGS_URL`, e.g.
   * `https://api.openai.com/v1`): North POSTs to `<url>/embeddings`.
   */
  url: string;
  /** `NORTH_EMBEDDINGS_MODEL`, sent with every request and stored with the vectors. */
  model: string;
  /** A file holding the API key (`NORTH_EMBEDDINGS_API_KEY_FILE`), read once, here. */
  apiKeyFile?: string;
  /** A call with no complete answer by then is aborted as `timeout`; default 2,000 ms. */
  timeoutMs?: number;
  /** Texts per request in `embedMany`; default 32 (TEI's default limit; OpenAI takes 2,048). */
  maxBatchSize?: number;
  /** Class transitions are logged here, once each: never the key, a text or an answer. */
  logger: Logger;
  breaker?: Omit<BreakerOptions, "now">;
  fetch?: typeof fetch;
  /** Epoch milliseconds, for the breaker and Retry-After; `Date.now` by default. */
  now?: () => number;
}

/** An `Embedder` behind a network, with typed results, its health and what it embeds with. */
export interface EmbeddingsProvider extends Embedder {
  readonly model: string;
  /** The vectors' length, learned from the provider's first answer; undefined before it. */
  readonly dimensions: number | undefined;
  /** Vectors for every text, in order, in requests of at most `maxBatchSize`; never throws. */
  embedMany(texts: readonly string[]): Promise<EmbedResult>;
  /** Throws `EmbedderUnavailableError` naming the class where `embedMany` returns a failure. */
  embed(texts: readonly string[]): Promise<number[][]>;
  status(): EmbedderStatus;
}

/** What `embed` throws: the provider gave no vectors, for the reason its class names. */
export class EmbedderUnavailableError extends Error {
  override name = "EmbedderUnavailableError";
  constructor(
    readonly failureClass: EmbedderFailureClass,
    readonly retryAfterMs?: number,
  ) {
    super(`the embeddings provider gave no vectors: ${failureClass}`);
  }
}

function readApiKey(file: string): string {
  let key: string;
  try {
    key = readFileSync(file, "utf8").trim();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(`the embeddings API key file cannot be read (${String(code ?? "error")})`);
  }
  if (!key) throw new Error("the embeddings API key file is empty");
  return key;
}

/**
 * North's one door to an OpenAI-compatible embeddings provider (OpenAI, Azure OpenAI, Mistral,
 * Voyage, Ollama, vLLM, TEI…): batching, the failure classes of SPEC §5 as values, a circuit
 * breaker, dimensions learned from the first answer and then enforced, and a status for
 * `/readyz`. The key is read once and kept in this closure only.
 */
export function createEmbeddingsProvider(options: EmbeddingsProviderOptions): EmbeddingsProvider {
  const now = options.now ?? Date.now;
  const logger = options.logger;
  const model = options.model;
  const maxBatchSize = options.maxBatchSize ?? 32;
  const endpoint = embeddingsEndpoint(options.url);
  const apiKey = options.apiKeyFile ? readApiKey(options.apiKeyFile) : undefined;
  const breaker = createBreaker({ ...options.breaker, now });
  let dimensions: number | undefined;
  /** Set from the first failure until the next success. */
  let degraded: { class: EmbedderFailureClass; since: number } | undefined;

  const failed = (failure: EmbedFailure) => {
    if (degraded?.class === failure.class) return;
    degraded = { class: failure.class, since: degraded?.since ?? now() };
    logger.warn(
      {
        embedder: {
          class: failure.class,
          reason: failure.reason,
          model,
          breaker: breaker.state(),
          retryInMs: breaker.retryInMs(),
        },
      },
      `embeddings provider ${failure.class}: semantic recall falls back to full text`,
    );
  };

  const answered = (length: number) => {
    if (dimensions === undefined) {
      dimensions = length;
      logger.info({ embedder: { model, dimensions } }, "embeddings provider answered");
    }
    if (degraded) {
      logger.info(
        { embedder: { model, dimensions, degradedMs: now() - degraded.since } },
        "embeddings provider answering again",
      );
      degraded = undefined;
    }
  };

  async function batch(texts: readonly string[]): Promise<EmbedResult> {
    const admission = breaker.admit();
    if (!admission.allowed) {
      const refused: EmbedFailure = {
        ok: false,
        class: admission.class,
        reason: "the circuit breaker is open",
      };
      if (admission.retryAfterMs !== undefined) refused.retryAfterMs = admission.retryAfterMs;
      return refused;
    }
    let result = await requestEmbeddings(
      {
        endpoint,
        model,
        apiKey,
        timeoutMs: options.timeoutMs ?? 2_000,
        dimensions,
        fetch: options.fetch ?? fetch,
        now,
      },
      texts,
    );
    const length = result.ok ? result.vectors[0]?.length : undefined;
    // Another call may have learned the dimensions while this one was out.
    if (length !== undefined && dimensions !== undefined && length !== dimensions) {
      result = {
        ok: false,
        class: "rejected",
        reason: `an embedding has ${length} dimensions, not ${dimensions}`,
      };
    }
    if (result.ok) {
      breaker.succeeded();
      if (length !== undefined) answered(length);
      return result;
    }
    breaker.failed(result.class, result.retryAfterMs, admission.probe);
    failed(result);
    const retryInMs = breaker.retryInMs();
    return retryInMs === undefined ? result : { ...result, retryAfterMs: retryInMs };
  }

  async function embedMany(texts: readonly string[]): Promise<EmbedResult> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += maxBatchSize) {
      const result = await batch(texts.slice(start, start + maxBatchSize));
      if (!result.ok) return result;
      vectors.push(...result.vectors);
    }
    return { ok: true, vectors };
  }

  return {
    model,
    get dimensions() {
      return dimensions;
    },
    embedMany,
    async embed(texts) {
      const result = await embedMany(texts);
      if (!result.ok) throw new EmbedderUnavailableError(result.class, result.retryAfterMs);
      return result.vectors;
    },
    status(): EmbedderStatus {
      const status: EmbedderStatus = { state: degraded ? "degraded" : "ok", model };
      if (degraded) {
        status.class = degraded.class;
        status.since = new Date(degraded.since).toISOString();
      }
      if (dimensions !== undefined) status.dimensions = dimensions;
      return status;
    },
  };
}
