import { CLOSING_REMINDER, SAFETY_RULES } from "@north/agent-runtime";
import { hasScopes, type Principal, type Scope } from "../principal.ts";
import type { Capability } from "../tool-definition.ts";
import {
  createMemoryReadCapability,
  createMemoryWriteCapability,
  DEFAULT_RECALL_TOKEN_BUDGET,
  type MemoryDeps,
  SEMANTIC_RECALL,
} from "./memory/index.ts";
import { workingProfileCapability } from "./working-profile/index.ts";

export { DEFAULT_RECALL_TOKEN_BUDGET, SEMANTIC_RECALL };

/** What the capabilities are built with, once per process, at the composition root. */
export interface CapabilityDeps {
  /** Makes recall semantic when set; nothing in North downloads a model. */
  embedder?: MemoryDeps["embedder"];
  /** Token budget for fenced memory blocks; default {@link DEFAULT_RECALL_TOKEN_BUDGET}. */
  recallTokenBudget?: number;
}

/**
 * Every capability North can offer, each built by its factory with what it needs, in the order
 * tools/list, prompts/list and the instructions compose them.
 */
export function createCapabilities(deps: CapabilityDeps = {}): readonly Capability[] {
  const memory: MemoryDeps = {
    embedder: deps.embedder,
    recallTokenBudget: deps.recallTokenBudget ?? DEFAULT_RECALL_TOKEN_BUDGET,
  };
  return [
    // Memory-read first: its briefing (which includes the working profile) is the first call of a
    // conversation, so its guidance leads the instructions.
    createMemoryReadCapability(memory),
    workingProfileCapability,
    createMemoryWriteCapability(memory),
  ];
}

/**
 * The capabilities as built without an embedder and with the default budget: what the contract
 * tests, the manifest's defaults and the docs read, and what a server given no list runs.
 */
export const CAPABILITIES: readonly Capability[] = createCapabilities();

/**
 * What {@link authorize} is asked about: calling a tool (`tools/call`), getting a prompt
 * (`prompts/get`), or seeing a capability — its tools, prompts and guidance listed, its
 * activation in GET /manifest — named by its id (`capability`).
 */
export type AuthorizeMethod = "tools/call" | "prompts/get" | "capability";

export type Authorization =
  | { allowed: true; capability: Capability }
  /** No capability owns the name: the SDK's unknown tool or prompt. */
  | { allowed: false; reason: "unknown" }
  /** The owning capability needs scopes this principal lacks: `scopes` are all it needs. */
  | { allowed: false; reason: "scope_off"; capability: Capability; scopes: readonly Scope[] };

function owns(capability: Capability, method: AuthorizeMethod, name: string): boolean {
  switch (method) {
    case "tools/call":
      return capability.tools.some((tool) => tool.name === name);
    case "prompts/get":
      return capability.prompts.some((prompt) => prompt.name === name);
    case "capability":
      return capability.id === name;
  }
}

/**
 * May this principal call this tool, get this prompt, or see this capability? The one answer
 * the scope gate (403), the server's listing and lookup, step-up and GET /manifest all read: a
 * name is allowed exactly when the principal holds every scope of the capability that owns it.
 */
export function authorize(
  principal: Principal,
  method: AuthorizeMethod,
  name: string,
  all: readonly Capability[] = CAPABILITIES,
): Authorization {
  const capability = all.find((candidate) => owns(candidate, method, name));
  if (!capability) return { allowed: false, reason: "unknown" };
  return hasScopes(principal, capability.scopes)
    ? { allowed: true, capability }
    : { allowed: false, reason: "scope_off", capability, scopes: capability.scopes };
}

/** The capabilities this principal may see, and so whose tools and prompts it may use. */
export function activeCapabilities(
  principal: Principal,
  all: readonly Capability[] = CAPABILITIES,
): Capability[] {
  return all.filter((capability) => authorize(principal, "capability", capability.id, all).allowed);
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
  const activations: CapabilityActivation[] = [];
  const features: CapabilityActivation[] = [];
  for (const capability of all) {
    const allowed = authorize(principal, "capability", capability.id, all).allowed;
    activations.push(
      allowed
        ? { id: capability.id, scopes: capability.scopes, active: true }
        : { id: capability.id, scopes: capability.scopes, active: false, reason: "scope_off" },
    );
    for (const feature of capability.features ?? []) {
      const reason: InactiveReason | undefined = !allowed
        ? "scope_off"
        : !options.embedder
          ? "no_embedder"
          : options.embedderFailure
            ? `degraded:${options.embedderFailure}`
            : undefined;
      features.push(
        reason
          ? { id: feature.id, scopes: capability.scopes, active: false, reason }
          : { id: feature.id, scopes: capability.scopes, active: true },
      );
    }
  }
  return [...activations, ...features];
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
