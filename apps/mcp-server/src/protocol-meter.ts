import { randomUUID } from "node:crypto";
import { type Database, recordAudit, withTenant } from "@north/db";
import type { RateLimiter } from "./limiter.ts";
import { describeError, type Logger } from "./logger.ts";
import type { Principal } from "./principal.ts";
import { rateLimitRefusal } from "./refusal.ts";
import { SERVER_ERROR } from "./unavailable.ts";

/**
 * Every JSON-RPC message a principal sends costs one point of its protocol budget (SPEC §3a),
 * whatever the method, before any server work: a batch costs one per message. A `tools/call`
 * costs its point too, on top of its read or write budget, because a call the runner never
 * reaches (an unknown tool, invalid arguments) is charged nowhere else.
 */

/** The most messages one batch may hold: the SDK's Streamable HTTP transport's own limit. */
export const MAX_BATCH_SIZE = 100;

/** The ledger's name for a request refused before it reached any tool. */
export const PROTOCOL_AUDIT_TOOL = "mcp_protocol";

export interface ProtocolMeterDeps {
  db: Database;
  limiter: RateLimiter;
  logger: Logger;
  /**
   * The principal proven, for one North remembered (decision 036): run before a refusal is
   * logged, audited or answered, so none is for a credential that no longer holds (it throws
   * the 401 then).
   */
  prove?: () => Promise<Principal>;
}

/** The JSON-RPC error of a message over its budget, in a rate-limited tool receipt's words. */
function rateLimitedError(retryAfterS: number) {
  const refusal = rateLimitRefusal(retryAfterS);
  return {
    code: SERVER_ERROR,
    message: `rejected: ${refusal.code}. ${refusal.message}`,
    data: { code: refusal.code, retry_after_s: retryAfterS },
  };
}

/**
 * Takes `points` from the principal's protocol budget. Over it: logged and audited as a
 * rate-limited call (ids and the message count only; a failed audit is logged, the refusal
 * stands), and returns the seconds to wait.
 */
async function charge(
  principal: Principal,
  requestId: string,
  points: number,
  deps: ProtocolMeterDeps,
): Promise<number | undefined> {
  const decision = await deps.limiter.consume(principal, "protocol", points);
  if (decision.allowed) return undefined;
  let refused = principal;
  if (deps.prove) {
    try {
      refused = await deps.prove();
    } catch (error) {
      // A credential that no longer holds: the points just counted against its member go back.
      await deps.limiter.refund(principal, "protocol", points);
      throw error;
    }
  }
  const { organizationId, userId } = refused;
  deps.logger.info(
    {
      requestId,
      tool: PROTOCOL_AUDIT_TOOL,
      outcome: "rate_limited",
      organizationId,
      userId,
      messages: points,
    },
    "mcp request refused",
  );
  await withTenant(deps.db, { organizationId, userId }, (tx) =>
    recordAudit(tx, {
      tool: PROTOCOL_AUDIT_TOOL,
      outcome: "rate_limited",
      tokenId: refused.tokenId,
      requestId,
      affected: points,
    }),
  ).catch((error) =>
    deps.logger.warn({ requestId, ...describeError(error) }, "audit of a refusal failed"),
  );
  return decision.retryAfterS;
}

/** The id of a JSON-RPC request (a message that expects an answer), else undefined. */
function requestIdOf(message: unknown): string | number | undefined {
  if (!message || typeof message !== "object") return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (typeof method !== "string") return undefined;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });

/**
 * Meters one parsed `POST /mcp` body before any server is built for it. A batch of more than
 * the SDK's batch limit is refused 400 at once, uncharged, as the SDK itself would; a body over
 * the budget is refused whole with 429, `Retry-After` and, for each request in it, a JSON-RPC
 * error carrying its id. Returns that refusal, or undefined to serve the body.
 */
export async function meterPost(
  body: unknown,
  principal: Principal,
  requestId: string,
  deps: ProtocolMeterDeps,
): Promise<Response | undefined> {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length > MAX_BATCH_SIZE) {
    return json(400, {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`,
      },
    });
  }
  const retryAfterS = await charge(principal, requestId, Math.max(1, messages.length), deps);
  if (retryAfterS === undefined) return undefined;
  const error = rateLimitedError(retryAfterS);
  const ids = messages.map(requestIdOf).filter((id) => id !== undefined);
  const answer =
    Array.isArray(body) && ids.length > 0
      ? ids.map((id) => ({ jsonrpc: "2.0", id, error }))
      : { jsonrpc: "2.0", id: ids[0] ?? null, error };
  return json(429, answer, { "Retry-After": String(retryAfterS) });
}

/**
 * Meters `GET /manifest`, which carries what tools/list and prompts/list do: one point of the
 * same budget. Over it: 429 with `Retry-After` and the code in JSON, as North's other refusals
 * outside JSON-RPC. Returns that refusal, or undefined to serve the manifest.
 */
export async function meterManifest(
  principal: Principal,
  requestId: string,
  deps: ProtocolMeterDeps,
): Promise<Response | undefined> {
  const retryAfterS = await charge(principal, requestId, 1, deps);
  if (retryAfterS === undefined) return undefined;
  const refusal = rateLimitRefusal(retryAfterS);
  return json(429, { error: refusal.message, ...refusal }, { "Retry-After": String(retryAfterS) });
}

/**
 * The same meter on a long-lived connection (`serve --stdio`), run as each message arrives:
 * undefined delivers the message; otherwise it is dropped, and a request among them gets the
 * returned JSON-RPC error (the rate-limited one, or a bare internal error if the meter failed).
 */
export async function meterMessage(
  principal: Principal,
  deps: ProtocolMeterDeps,
): Promise<{ code: number; message: string; data?: unknown } | undefined> {
  const requestId = randomUUID();
  try {
    const retryAfterS = await charge(principal, requestId, 1, deps);
    return retryAfterS === undefined ? undefined : rateLimitedError(retryAfterS);
  } catch (error) {
    deps.logger.error({ requestId, ...describeError(error) }, "protocol meter failed");
    return { code: -32603, message: "Internal error" };
  }
}
