import { hasScopes, type Principal, type Scope } from "../principal.ts";
import type { Capability } from "../tool-definition.ts";
import { memoryReadCapability, memoryWriteCapability } from "./memory/index.ts";
import { workingProfileCapability } from "./working-profile/index.ts";

/** Every capability North can offer. tools/list, prompts/list and instructions compose from it. */
export const CAPABILITIES: readonly Capability[] = [
  workingProfileCapability,
  memoryReadCapability,
  memoryWriteCapability,
];

/** The capabilities whose scopes this principal holds. */
export function activeCapabilities(
  principal: Principal,
  all: readonly Capability[] = CAPABILITIES,
): Capability[] {
  return all.filter((capability) => hasScopes(principal, capability.scopes));
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
  "North is this legal workspace's memory. It tells you how the lawyer you are helping works, and you keep it up to date as they tell you.";

/** Server instructions for a principal: a shared preamble, then each active capability's lines. */
export function composeInstructions(capabilities: readonly Capability[]): string {
  return [PREAMBLE, ...capabilities.flatMap((c) => c.guidance)].join("\n\n");
}
