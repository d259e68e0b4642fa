import {
  type AuditEvent,
  type AuditOutcome,
  auditStatement,
  type Database,
  finishWith,
  hasSqlState,
  isCredentialRefused,
  isDatabaseUnavailable,
  type Tenant,
  type Tx,
  withTenant,
} from "@north/db";
import type { z } from "zod";
import type { CredentialProof } from "./credential-proof.ts";
import type { RateLimiter } from "./limiter.ts";
import { describeError, type Logger } from "./logger.ts";
import type { ToolCallOutcome, ToolMetrics } from "./metrics.ts";
import type { Principal } from "./principal.ts";
import {
  rateLimitRefusal,
  refusedToolResult,
  TIMEOUT_REFUSAL,
  UNAVAILABLE_REFUSAL,
} from "./refusal.ts";
import type { TenantGate } from "./tenant-gate.ts";
import type {
  AuditNote,
  Fingerprinter,
  ToolDefinition,
  ToolOutcome,
  ToolResult,
} from "./tool-definition.ts";

export interface RunContext {
  db: Database;
  limiter: RateLimiter;
  logger: Logger;
  fingerprint: Fingerprinter;
  now: () => number;
  principal: Principal;
  requestId: string;
  runId: string;
  /** Per-organisation concurrency on this replica; absent (stdio), no gate. */
  gate?: TenantGate;
  /** Counts calls, latencies and pool use for `/metrics`; absent (stdio), nothing is counted. */
  metrics?: ToolMetrics;
  /**
   * A remembered principal's proof (decision 036): every transaction of the call opens with it,
   * and records here whether the database took it.
   */
  proof?: CredentialProof;
}

/** Raised when a handler fails for a reason that is ours, not the caller's. */
export class InternalToolError extends Error {
  constructor() {
    super("Internal error");
    this.name = "InternalToolError";
  }
}

/**
 * Runs one validated tool call with the limiter and the ledger in front of it: a limited call
 * writes no row and is audited as `rate_limited`; otherwise the handler and its audit row share
 * one tenant transaction, so a call is either recorded with its effect or not at all. A handler
 * failure rolls back, is audited as `error` and logged once, and reaches the client as a bare
 * internal error. When the database cannot be reached, at any step, the call is refused with a
 * retryable `NORTH_UNAVAILABLE` instead, logged once and not audited (there is nowhere to write).
 */
export async function runTool(
  // biome-ignore lint/suspicious/noExplicitAny: any registered tool; input was parsed with its own schema.
  tool: ToolDefinition<any, any>,
  input: z.output<z.ZodObject>,
  ctx: RunContext,
): Promise<ToolResult> {
  const started = ctx.now();
  // Whatever is thrown past here reaches the client as an internal error.
  let outcome: ToolCallOutcome = "error";
  try {
    const answer = await runAudited(tool, input, ctx, started);
    outcome = answer.outcome;
    return answer.result;
  } catch (error) {
    // Nothing ran and nothing was recorded: the route looks the credential up again (decision 036).
    if (isCredentialRefused(error)) {
      outcome = "credential_refused";
      throw new InternalToolError();
    }
    if (!isDatabaseUnavailable(error)) throw error;
    outcome = "unavailable";
    ctx.logger.warn(
      {
        requestId: ctx.requestId,
        tool: tool.name,
        outcome: "unavailable",
        organizationId: ctx.principal.organizationId,
        latencyMs: Math.round(ctx.now() - started),
        ...describeError(error),
      },
      "tool call refused: the database is unavailable",
    );
    return refusedToolResult(UNAVAILABLE_REFUSAL, { tool, input });
  } finally {
    ctx.metrics?.toolCall(tool.name, outcome, (ctx.now() - started) / 1000);
  }
}

async function runAudited(
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  tool: ToolDefinition<any, any>,
  input: z.output<z.ZodObject>,
  ctx: RunContext,
  started: number,
): Promise<{ result: ToolResult; outcome: ToolCallOutcome }> {
  const { principal, requestId } = ctx;
  const tenant: Tenant = { organizationId: principal.organizationId, userId: principal.userId };
  const inTenant = tenantTransactions(ctx, tenant);
  /** Only the tenant and the audit row: a call refused or failed, which changed nothing. */
  const auditOnly = (event: AuditEvent) =>
    inTenant(
      async () => undefined,
      () => event,
    );
  const audit = auditEvents(tool.name, ctx);
  const log = (outcome: string) =>
    ctx.logger.info(
      {
        requestId,
        tool: tool.name,
        outcome,
        organizationId: principal.organizationId,
        userId: principal.userId,
        latencyMs: Math.round(ctx.now() - started),
      },
      "tool call",
    );

  /** A refused call writes nothing but its audit row, whether the limiter or the gate refused. */
  const refuse = async (retryAfterS: number) => {
    const target = tool.auditTarget?.(input);
    await auditOnly(audit("rate_limited", target)).catch(async (error: unknown) => {
      // The limiter counted the call: a credential the database refused gets the point back.
      if (isCredentialRefused(error)) await ctx.limiter.refund(principal, tool.kind);
      throw error;
    });
    log("rate_limited");
    const result = refusedToolResult(rateLimitRefusal(retryAfterS), { tool, input });
    return { result, outcome: "rate_limited" as const };
  };

  // A remembered principal is proven before a tool that calls out (an embeddings provider)
  // ahead of its first statement: a credential that no longer holds sends nothing anywhere.
  if (ctx.proof?.state === "pending" && tool.callsOut) await inTenant(async () => undefined);

  const decision = await ctx.limiter.consume(principal, tool.kind);
  if (!decision.allowed) return refuse(decision.retryAfterS);

  let outcome: ToolOutcome<unknown>;
  /** The note the handler audited its last statement with (`ctx.last`), if it did. */
  let sentWithLast: AuditNote | undefined;
  try {
    const transaction = () =>
      inTenant(
        (tx) =>
          tool.handler(input, {
            tx,
            principal,
            tenant,
            requestId,
            runId: ctx.runId,
            logger: ctx.logger,
            fingerprintSubject: (canonical) => ctx.fingerprint(canonical).fingerprint,
            last: (note, statement) => {
              // COMMIT goes out with it: only a read has nothing a later failure should undo.
              if (tool.kind !== "read") return statement();
              sentWithLast = note;
              const event = audit(note.outcome, note.target, note.affected, note.reason);
              return finishWith(tx, [auditStatement(event)], statement);
            },
          }),
        (result) =>
          audit(
            result.audit.outcome,
            result.audit.target,
            result.audit.affected,
            result.audit.reason,
          ),
      );
    const gated = ctx.gate
      ? await ctx.gate.run(tenant.organizationId, transaction)
      : { ok: true as const, value: await transaction() };
    // Not admitted: this workspace already runs its share of the pool; refuse as a limiter would.
    if (!gated.ok) return refuse(1);
    outcome = gated.value;
  } catch (error) {
    return failedCall(error, tool, ctx, () => auditOnly(audit("error")));
  }
  if (sentWithLast && !sameNote(sentWithLast, outcome.audit)) {
    // A handler's fault: the row written with COMMIT says other than the call's answer.
    ctx.logger.error(
      { requestId, tool: tool.name },
      "the audit sent with the last statement differs",
    );
  }
  log(outcome.audit.outcome);
  return { result: toolResult(outcome), outcome: outcome.audit.outcome };
}

/**
 * What a call whose transaction failed becomes (it rolled back, or never began). A credential
 * the database refused has no call to audit (decision 036), and an outage would stop the audit
 * too: both are thrown on, the refused credential's point given back, and an outage's when
 * nothing had proved a remembered credential yet. A statement timeout is a typed refusal;
 * anything else is logged, audited as `error` by `auditError`, and thrown as an internal error.
 */
async function failedCall(
  error: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  tool: ToolDefinition<any, any>,
  ctx: RunContext,
  auditError: () => Promise<unknown>,
): Promise<{ result: ToolResult; outcome: "timeout" }> {
  const { principal, requestId } = ctx;
  if (isCredentialRefused(error)) {
    await ctx.limiter.refund(principal, tool.kind);
    throw error;
  }
  if (isDatabaseUnavailable(error)) {
    // Nothing proved a remembered credential before the outage stopped its transaction, and a
    // lookup would have met the outage before the limiter: the point goes back.
    if (ctx.proof?.state === "pending") await ctx.limiter.refund(principal, tool.kind);
    throw error;
  }
  const timedOut = hasSqlState(error, QUERY_CANCELED);
  ctx.logger.error(
    { requestId, tool: tool.name, ...describeError(error) },
    timedOut ? "tool call hit the statement timeout" : "tool call failed",
  );
  await auditError().catch((failure) =>
    ctx.logger.error({ requestId, ...describeError(failure) }, "audit of a failure failed"),
  );
  // A statement timeout is the caller's call being too expensive, not a server fault: the
  // transaction rolled back, so say so and what to do, as a typed refusal.
  if (timedOut) return { result: refusedToolResult(TIMEOUT_REFUSAL), outcome: "timeout" };
  throw new InternalToolError();
}

/** What the host receives for a handler's outcome. */
function toolResult(outcome: ToolOutcome<unknown>): ToolResult {
  return {
    content: [{ type: "text", text: outcome.text }],
    ...(outcome.structured === undefined
      ? {}
      : { structuredContent: outcome.structured as Record<string, unknown> }),
    ...(outcome.isError ? { isError: true } : {}),
  };
}

/**
 * The tenant transactions of one call, each counted in `/metrics` as waiting for and then
 * holding a connection. Its audit row, built from the work's result, goes out with COMMIT
 * (decision 035); a remembered credential is proven in the first of them (decision 036).
 */
function tenantTransactions(ctx: RunContext, tenant: Tenant) {
  return async <T>(work: (tx: Tx) => Promise<T>, audited?: (result: T) => AuditEvent) => {
    const tail = audited && ((result: T) => [auditStatement(audited(result))]);
    const options = { proof: ctx.proof?.proof };
    try {
      const result = await (ctx.metrics
        ? ctx.metrics.pooled((acquired) =>
            withTenant(
              ctx.db,
              tenant,
              (tx) => {
                acquired();
                return work(tx);
              },
              tail,
              options,
            ),
          )
        : withTenant(ctx.db, tenant, work, tail, options));
      if (ctx.proof) ctx.proof.state = "proven";
      return result;
    } catch (error) {
      if (ctx.proof && isCredentialRefused(error)) ctx.proof.state = "refused";
      throw error;
    }
  };
}

/** The audit rows of one call of `tool`: its target only as a fingerprint, never a body. */
function auditEvents(tool: string, ctx: RunContext) {
  return (
    outcome: AuditOutcome,
    target?: string,
    affected?: number,
    reason?: string,
  ): AuditEvent => ({
    tool,
    outcome,
    tokenId: ctx.principal.tokenId,
    requestId: ctx.requestId,
    target: target === undefined ? undefined : ctx.fingerprint(target),
    affected,
    reason,
  });
}

const sameNote = (a: AuditNote, b: AuditNote) =>
  a.outcome === b.outcome &&
  a.target === b.target &&
  a.affected === b.affected &&
  a.reason === b.reason;

/** SQLSTATE 57014: the statement was cancelled, here by `statement_timeout`. */
const QUERY_CANCELED = "57014";
