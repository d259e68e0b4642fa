import { MEMORY_READ_GUIDANCE, MEMORY_WRITE_GUIDANCE } from "@north/agent-runtime";
import type { Capability } from "../../tool-definition.ts";
import { briefingTool } from "./briefing.ts";
import { forgetTool } from "./forget.ts";
import { heldTool } from "./held.ts";
import { recallTool } from "./recall.ts";
import { rememberTool } from "./remember.ts";

/** Reading the workspace memory: recall, subject access, and the start-of-conversation briefing. */
/** Recall by meaning, when an embedder is configured. */
export const SEMANTIC_RECALL = "semantic-recall";

export const memoryReadCapability: Capability = {
  id: "memory-read",
  scopes: ["memory:read"],
  tools: [briefingTool, recallTool, heldTool],
  prompts: [],
  guidance: MEMORY_READ_GUIDANCE,
  features: [{ id: SEMANTIC_RECALL, needs: "embedder" }],
};

/** Writing it: remember and forget (erasure). */
export const memoryWriteCapability: Capability = {
  id: "memory-write",
  scopes: ["memory:write"],
  tools: [rememberTool, forgetTool],
  prompts: [],
  guidance: MEMORY_WRITE_GUIDANCE,
};
