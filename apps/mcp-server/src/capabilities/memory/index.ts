import { MEMORY_READ_GUIDANCE, MEMORY_WRITE_GUIDANCE } from "@north/agent-runtime";
import type { Capability } from "../../tool-definition.ts";
import { createBriefingTool } from "./briefing.ts";
import type { MemoryDeps } from "./deps.ts";
import { forgetTool } from "./forget.ts";
import { heldTool } from "./held.ts";
import { createRecallTool } from "./recall.ts";
import { createRememberTool } from "./remember.ts";

export { DEFAULT_RECALL_TOKEN_BUDGET, type MemoryDeps } from "./deps.ts";

/** Recall by meaning, when an embedder is configured. */
export const SEMANTIC_RECALL = "semantic-recall";

/** Reading the workspace memory: recall, subject access, and the start-of-conversation briefing. */
export function createMemoryReadCapability(deps: MemoryDeps): Capability {
  return {
    id: "memory-read",
    scopes: ["memory:read"],
    tools: [createBriefingTool(deps), createRecallTool(deps), heldTool],
    prompts: [],
    guidance: MEMORY_READ_GUIDANCE,
    features: [{ id: SEMANTIC_RECALL, needs: "embedder" }],
  };
}

/** Writing it: remember and forget (erasure). */
export function createMemoryWriteCapability(deps: MemoryDeps): Capability {
  return {
    id: "memory-write",
    scopes: ["memory:write"],
    tools: [createRememberTool(deps), forgetTool],
    prompts: [],
    guidance: MEMORY_WRITE_GUIDANCE,
  };
}
