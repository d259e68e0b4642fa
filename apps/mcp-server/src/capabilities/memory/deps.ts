import type { Embedder } from "../../tool-definition.ts";

/**
 * What the memory tools are built with, once, at the composition root: the same for every call,
 * so it is captured by the tools rather than carried in each call's context.
 */
export interface MemoryDeps {
  /** Makes recall semantic and gives new memories a vector; without one, recall is full text. */
  embedder?: Embedder;
  /** Token budget for fenced memory blocks (recall, briefing). */
  recallTokenBudget: number;
}

/** The budget when none is configured (`NORTH_RECALL_TOKEN_BUDGET`'s default). */
export const DEFAULT_RECALL_TOKEN_BUDGET = 1_500;
