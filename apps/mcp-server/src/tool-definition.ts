import type { TargetFingerprint, Tenant, Tx } from "@north/db";
import type { Logger } from "pino";
import type { z } from "zod";
import type { Principal, Scope } from "./principal.ts";

/**
 * The seam between North and the MCP SDK: capabilities declare tools and prompts with these
 * types, and only server.ts turns them into SDK calls. Nothing here imports the SDK.
 */

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What an audit row may say about a call: its outcome and, at most, one id to fingerprint. */
export interface AuditNote {
  outcome: "created" | "updated" | "noop" | "conflict" | "rejected" | "read" | "forgotten";
  /** An id or subject; the runner stores only its keyed fingerprint and length. */
  target?: string;
  /** How many rows the call affected, where that is the point (forget). */
  affected?: number;
  /** A short code saying why, e.g. the embeddings provider's failure class on a degraded recall. */
  reason?: string;
}

/**
 * A `tools/call` result as North builds it (the runner, the refusals): text content, the
 * structured receipt when the tool has one, and `isError`. Structurally the SDK's
 * `CallToolResult`, so server.ts hands it over as it is.
 */
export type ToolResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** A handler's answer: structured content, a one-line text rendering, and the audit note. */
export interface ToolOutcome<Output> {
  structured?: Output;
  text: string;
  isError?: boolean;
  audit: AuditNote;
}

export interface ToolContext {
  /** The tenant transaction the call runs in; the audit row joins it. */
  tx: Tx;
  principal: Principal;
  tenant: Tenant;
  requestId: string;
  /** The run that writes: `request:<id>` over HTTP, `stdio:<id>` for a stdio session. */
  runId: string;
  logger: Logger;
  /** Keyed fingerprint (hex) of a subject's canonical text; the same key as the ledger's. */
  fingerprintSubject: (canonical: string) => string;
  /**
   * Runs the call's last statement — `statement` must send exactly one, before its first
   * `await` — with the call's audit row and COMMIT in the same write, so a read is one round trip
   * (decision 036). `audit` must be the note the handler then returns; no statement may follow.
   * Without it, the audit row goes out after the handler returns.
   */
  last<T>(audit: AuditNote, statement: () => Promise<T>): Promise<T>;
}

/** What a tool's {@link ToolDefinition.stepUp} may look at: the caller, and their tenant. */
export type StepUpContext = Pick<ToolContext, "tx" | "principal" | "tenant" | "fingerprintSubject">;

/** Turns texts into vectors. Nothing in North downloads a model: an embedder is injected. */
export interface Embedder {
  embed(texts: readonly string[]): Promise<number[][]>;
  /**
   * Health of an embedder behind a network (the embeddings provider), for `/readyz` and
   * `GET /manifest`. An embedder without it is always ok.
   */
  status?(): EmbedderStatus;
}

/** Why an embeddings provider gave no vectors (SPEC §5): never a tool failure. */
export type EmbedderFailureClass =
  | "rate_limited"
  | "credential_refused"
  | "rejected"
  | "unreachable"
  | "timeout";

export interface EmbedderStatus {
  /** degraded from the first failed call until the next call that succeeds. */
  state: "ok" | "degraded";
  /** The latest failure's class, while degraded. */
  class?: EmbedderFailureClass;
  /** ISO 8601 time the embedder became degraded. */
  since?: string;
  model: string;
  /** Learned from the provider's first answer; every later vector must have this length. */
  dimensions?: number;
}

/**
 * A refusal that asks the caller to wait `retry_after_s` and send the same call again: the
 * limiter's (`NORTH_RATE_LIMITED`) or an unreachable database's (`NORTH_UNAVAILABLE`). Built in
 * refusal.ts; a tool only shapes it into its receipt.
 */
export interface RetryRefusal {
  code: "NORTH_RATE_LIMITED" | "NORTH_UNAVAILABLE";
  message: string;
  retry_after_s: number;
}

/** Calls are limited per principal in two budgets (SPEC §7). */
export type ToolKind = "read" | "write";

export interface ToolDefinition<
  Input extends z.ZodObject = z.ZodObject,
  Output extends z.ZodObject = z.ZodObject,
> {
  name: string;
  title: string;
  description: string;
  kind: ToolKind;
  inputSchema: Input;
  outputSchema: Output;
  annotations: ToolAnnotations;
  /**
   * Builds the receipt for a call refused before it ran (rate limited, or the database
   * unavailable), when the tool's output schema has one; otherwise the refusal is a text-only
   * error.
   */
  refusalReceipt?: (input: z.output<Input>, refusal: RetryRefusal) => z.output<Output>;
  /** The id or subject a call names, for the audit row of a call refused by the limiter. */
  auditTarget?: (input: z.output<Input>) => string | undefined;
  /**
   * Scopes this call needs beyond its capability's, for this principal and input: decided
   * before the call runs, in a read-only look at the caller's tenant, so a host holding an OAuth
   * token gets 403 insufficient_scope and re-authorizes with them (step-up, decision 030) before
   * anything is changed. Empty: none.
   */
  stepUp?: (input: z.output<Input>, ctx: StepUpContext) => Promise<readonly Scope[]>;
  /**
   * The handler calls a service outside North (the embeddings provider) before its first
   * statement: a remembered credential is then proven first (decision 036), so one that no
   * longer holds sends nothing anywhere.
   */
  callsOut?: boolean;
  handler: (input: z.output<Input>, ctx: ToolContext) => Promise<ToolOutcome<z.output<Output>>>;
}

export interface PromptMessage {
  role: "user" | "assistant";
  text: string;
}

export interface PromptDefinition<Args extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  argsSchema: Args;
  render: (args: z.output<Args>) => PromptMessage[];
}

/** One capability owns, in one place, its id, scopes, tools, prompts and guidance (SPEC §3). */
export interface Capability {
  id: string;
  /** Every one of these scopes is needed for the capability to be active for a principal. */
  scopes: readonly Scope[];
  // biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list; each entry is checked by `satisfies ToolDefinition` where it is declared.
  tools: readonly ToolDefinition<any, any>[];
  // biome-ignore lint/suspicious/noExplicitAny: as above, for prompts.
  prompts: readonly PromptDefinition<any>[];
  guidance: readonly string[];
  /**
   * Features that ride on this capability and need more than its scopes (GET /manifest lists
   * each with its own activation): today, semantic recall, which needs an embedder.
   */
  features?: readonly { id: string; needs: "embedder" }[];
}

/** The fingerprinting function the runner uses for audit targets. */
export type Fingerprinter = (value: string) => TargetFingerprint;
