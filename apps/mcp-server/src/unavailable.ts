import type { Context } from "hono";
import { CAPABILITIES } from "./capabilities/index.ts";
import { claimsModernRevision } from "./protocol-revision.ts";
import {
  refusedToolResult,
  UNAVAILABLE_CODE,
  UNAVAILABLE_MESSAGE,
  UNAVAILABLE_REFUSAL,
  UNAVAILABLE_RETRY_AFTER_S,
} from "./refusal.ts";
import type { Capability, ToolResult } from "./tool-definition.ts";

/**
 * What a request is answered while PostgreSQL cannot be reached (decision 022): a retryable
 * refusal with the code `NORTH_UNAVAILABLE`, never an internal error. The tool runner answers it
 * (refusal.ts) for a call whose transaction met the outage; this file, the HTTP layer's answer
 * for a request whose token could not be checked because of it.
 */

/** JSON-RPC's implementation-defined server error range starts here; MCP reserves none of it. */
export const SERVER_ERROR = -32000;

/** The refusal for a `tools/call` whose principal could not be resolved: the named tool's own. */
function refusalForCall(params: unknown, capabilities: readonly Capability[]): ToolResult {
  const { name, arguments: args } = (params ?? {}) as { name?: unknown; arguments?: unknown };
  const tool = capabilities.flatMap((c) => c.tools).find((t) => t.name === name);
  const parsed = tool?.inputSchema.safeParse(args ?? {});
  return tool && parsed?.success
    ? refusedToolResult(UNAVAILABLE_REFUSAL, { tool, input: parsed.data })
    : refusedToolResult(UNAVAILABLE_REFUSAL);
}

/**
 * The answer to an HTTP request that failed because the database is unavailable. On `/mcp`, a
 * single `tools/call` gets the same tool result the runner gives (HTTP 200), so the model reads
 * "try again shortly" whichever step met the outage; any other MCP message gets HTTP 503 with
 * `Retry-After` and a JSON-RPC error carrying the code. Elsewhere: 503 with the code in JSON.
 */
export async function unavailableResponse(
  c: Context,
  capabilities: readonly Capability[] = CAPABILITIES,
): Promise<Response> {
  const headers = { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_S) };
  if (c.req.path !== "/mcp" || c.req.method !== "POST") {
    return c.json({ error: UNAVAILABLE_MESSAGE, code: UNAVAILABLE_CODE }, 503, headers);
  }
  let message: { method?: unknown; id?: unknown; params?: unknown } | undefined;
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
    if (body && typeof body === "object" && !Array.isArray(body)) message = body;
  } catch {
    message = undefined;
  }
  const id = typeof message?.id === "string" || typeof message?.id === "number" ? message.id : null;
  if (message?.method === "tools/call" && id !== null) {
    const refusal = refusalForCall(message.params, capabilities);
    // A 2026-07-28 result says it is complete (it could ask for input instead).
    const result = claimsModernRevision(c.req.raw, body)
      ? { ...refusal, resultType: "complete" }
      : refusal;
    return c.json({ jsonrpc: "2.0", id, result }, 200, headers);
  }
  return c.json(
    {
      jsonrpc: "2.0",
      id,
      error: {
        code: SERVER_ERROR,
        message: `${UNAVAILABLE_CODE}: ${UNAVAILABLE_MESSAGE}`,
        data: { code: UNAVAILABLE_CODE, retry_after_s: UNAVAILABLE_RETRY_AFTER_S },
      },
    },
    503,
    headers,
  );
}
