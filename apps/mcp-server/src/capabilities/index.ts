import { CLOSING_REMINDER, SAFETY_RULES } from "@north/agent-runtime";
import { hasScopes, type Principal, type Scope } from "../principal.ts";
import type { Capability } from "../tool-definition.ts";
import { memoryReadCapability, memoryWriteCapability, SEMANTIC_RECALL } from "./memory/index.ts";

export { SEMANTIC_RECALL };

import { workingProfileCapability } from "./working-profile/index.ts";

/** Every capability North can offer. tools/list, prompts/list and instructions compose from it. */
export const CAPABILITIES: readonly Capability[] = [
  // Memory-read first: its briefing (which includes the working profile) is the first call of a
  // conversation, so its guidance leads the instructions.
  memoryReadCapability,
  workingProfileCapability,
  memoryWriteCapability,
];

/** The capabilities whose scopes this principal holds. */
export function activeCapabilities(
  principal: Principal,
  all: readonly Capability[] = CAPABILITIES,
): Capability[] {
  return all.filter((capability) => hasScopes(principal, capability.scopes));
}

/** Why a capability or feature is off for a principal (GET /manifest). */
export type InactiveReason = "scope_off" | "no_embedder" | `degraded:${string}`;

export interface CapabilityActivation {
  id: string;
  scopes: readonly Scope[];
  active: boolean;
  /** Present exactly when `active` is false. */
  reason?: InactiveReason;
}

export interface ActivationOptions {
  /** True when an embedder is configured, so recall can be semantic. */
  embedder: boolean;
  /** The embedder's current failure class, when it is failing (recall then runs on full text). */
  embedderFailure?: string;
}

/**
 * Every capability with whether it is active for this principal and, when not, why — so an
 * operator can see why a model does not get a tool (the source system's "activations with
 * reasons"), followed by each capability's features (semantic recall, on memory-read).
 */
export function capabilityActivations(
  principal: Principal,
  options: ActivationOptions,
  all: readonly Capability[] = CAPABILITIES,
): CapabilityActivation[] {
  const activations: CapabilityActivation[] = all.map((capability) =>
    hasScopes(principal, capability.scopes)
      ? { id: capability.id, scopes: capability.scopes, active: true }
      : { id: capability.id, scopes: capability.scopes, active: false, reason: "scope_off" },
  );
  for (const capability of all) {
    for (const feature of capability.features ?? []) {
      const reason: InactiveReason | undefined = !hasScopes(principal, capability.scopes)
        ? "scope_off"
        : !options.embedder
          ? "no_embedder"
          : options.embedderFailure
            ? `degraded:${options.embedderFailure}`
            : undefined;
      activations.push(
        reason
          ? { id: feature.id, scopes: capability.scopes, active: false, reason }
          : { id: feature.id, scopes: capability.scopes, active: true },
      );
    }
  }
  return activations;
}

/**
 * The scopes a tools/call or prompts/get needs, from whichever capability owns that name, or
 * undefined for a name no capability owns (the SDK answers those as unknown).
 */
export function requiredScopes(
  method: string,
  name: string,
  all: readonly Capability[] = CAPABILITIES,
): readonly Scope[] | undefined {
  const owner = all.find((capability) =>
    method === "tools/call"
      ? capability.tools.some((tool) => tool.name === name)
      : method === "prompts/get"
        ? capability.prompts.some((prompt) => prompt.name === name)
        : false,
  );
  return owner?.scopes;
}

/**
 * Tool names a capability's guidance mentions but does not own. Must be empty for every
 * capability: a fact about a tool has one owner, and a principal without that tool's scope
 * would otherwise be told to call something it cannot see.
 */
export function foreignToolsInGuidance(capability: Capability): string[] {
  const own = new Set(capability.tools.map((tool) => tool.name));
  const named = capability.guidance.join("\n").match(/north__[a-z_]+/g) ?? [];
  return [...new Set(named)].filter((name) => !own.has(name));
}

const PREAMBLE =
  "North is this legal workspace's memory: how each lawyer works, and what the firm knows.";

/** Claude Code cuts instructions at 2,048 characters (SPEC §3b); North's stay below this. */
export const INSTRUCTIONS_MAX_CHARS = 2_000;

/**
 * Server instructions for a principal: the safety rules first (SPEC §3b), a one-line preamble,
 * each active capability's lines, and last a one-line reminder of the data boundary and honesty
 * (SPEC §5). Under {@link INSTRUCTIONS_MAX_CHARS} for every set of scopes (a test holds it).
 */
export function composeInstructions(capabilities: readonly Capability[]): string {
  return [
    ...SAFETY_RULES,
    PREAMBLE,
    ...capabilities.flatMap((c) => c.guidance),
    CLOSING_REMINDER,
  ].join("\n\n");
}
