import { z } from "zod";
import {
  type ActivationOptions,
  activeCapabilities,
  CAPABILITIES,
  capabilityActivations,
  composeInstructions,
} from "./capabilities/index.ts";
import type { Principal } from "./principal.ts";
import type {
  Capability,
  PromptDefinition,
  ToolAnnotations,
  ToolDefinition,
} from "./tool-definition.ts";

/**
 * What the model is offered, as data: each tool and prompt as tools/list and prompts/list publish
 * them, and the manifest (GET /manifest) that carries the same objects. server.ts serves them.
 */

// biome-ignore lint/suspicious/noExplicitAny: any registered tool.
type AnyTool = ToolDefinition<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: any registered prompt.
type AnyPrompt = PromptDefinition<any>;

/** An object's JSON Schema, typed as far as the SDK's `Tool` types it. */
type JsonObjectSchema = {
  type: "object";
  properties?: Record<string, object>;
  required?: string[];
  [key: string]: unknown;
};

/** A tool as tools/list publishes it: the SDK's `Tool`, built by North. */
export interface PublishedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonObjectSchema;
  outputSchema: JsonObjectSchema;
  annotations: ToolAnnotations & { title: string };
}

/** A prompt as prompts/list publishes it: the SDK's `Prompt`, built by North. */
export interface PublishedPrompt {
  name: string;
  title: string;
  description: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

const described = new WeakMap<AnyTool, PublishedTool>();

/**
 * A tool as the model receives it in tools/list (and in GET /manifest). Definitions are
 * immutable, so the JSON Schema conversion runs once per tool per process, not per request.
 */
export function describeTool(tool: AnyTool): PublishedTool {
  const cached = described.get(tool);
  if (cached) return cached;
  const published: PublishedTool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.inputSchema, {
      target: "draft-7",
      io: "input",
    }) as PublishedTool["inputSchema"],
    outputSchema: z.toJSONSchema(tool.outputSchema, {
      target: "draft-7",
      io: "output",
    }) as PublishedTool["outputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
  described.set(tool, published);
  return published;
}

/** A prompt as the model receives it in prompts/list. */
export function describePrompt(prompt: AnyPrompt): PublishedPrompt {
  const shape = prompt.argsSchema.shape as Record<string, z.ZodType>;
  return {
    name: prompt.name,
    title: prompt.title,
    description: prompt.description,
    arguments: Object.entries(shape).map(([name, schema]) => ({
      name,
      description: schema.description,
      required: !schema.safeParse(undefined).success,
    })),
  };
}

/**
 * What this principal's model receives: instructions, tools and prompts (SPEC §3), and every
 * capability with whether it is active and, when not, why.
 */
export function composeManifest(
  principal: Principal,
  all: readonly Capability[] = CAPABILITIES,
  options: ActivationOptions = { embedder: false },
) {
  const capabilities = activeCapabilities(principal, all);
  return {
    instructions: composeInstructions(capabilities),
    tools: capabilities.flatMap((c) => c.tools).map(describeTool),
    prompts: capabilities.flatMap((c) => c.prompts).map(describePrompt),
    capabilities: capabilityActivations(principal, options, all),
  };
}
