import type { RetryRefusal, ToolDefinition, ToolResult } from "./tool-definition.ts";

/**
 * Every refusal North answers a `tools/call` with instead of the tool's own answer, in one place:
 * over a budget (`NORTH_RATE_LIMITED`), the database unreachable (`NORTH_UNAVAILABLE`, decision
 * 022), the statement timeout (`NORTH_TIMEOUT`). Each is one code and one sentence saying what to
 * do next, as text; the first two also as the tool's refusal receipt.
 */

export const UNAVAILABLE_CODE = "NORTH_UNAVAILABLE";
/** Seconds a caller should wait before sending the same call again. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;
export const UNAVAILABLE_MESSAGE =
  "The database is unavailable, so the call could not be completed. Try again shortly with the same call; sending it again is safe.";

/**
 * What a caller over one of its budgets is told, wherever North meters (a tool call's read or
 * write budget, the protocol budget of every JSON-RPC message): one code and one sentence.
 */
export function rateLimitRefusal(retryAfterS: number): RetryRefusal {
  return {
    code: "NORTH_RATE_LIMITED",
    message: `Too many calls in a short time; nothing was done. Wait ${retryAfterS} s, then send the same call again.`,
    retry_after_s: retryAfterS,
  };
}

/** What a caller is told while PostgreSQL cannot be reached. */
export const UNAVAILABLE_REFUSAL: RetryRefusal = {
  code: UNAVAILABLE_CODE,
  message: UNAVAILABLE_MESSAGE,
  retry_after_s: UNAVAILABLE_RETRY_AFTER_S,
};

/**
 * A statement timeout is the caller's call being too expensive, not a server fault: the
 * transaction rolled back, so say so and what to do. Not "send the same call again", so no
 * receipt (a receipt's `retry_after_s` says exactly that).
 */
export const TIMEOUT_REFUSAL = {
  code: "NORTH_TIMEOUT",
  message:
    "The call took longer than the server allows and was cancelled; nothing was saved or changed. Narrow it (fewer, more distinctive search words, a subject) or try again shortly.",
} as const;

/**
 * The refused call as a tool result: `rejected: <code>. <message>` and, for a refusal that asks
 * for the same call again, the tool's refusal receipt when it has one (it echoes fields of the
 * input, so pass the input only once it parsed).
 */
export function refusedToolResult(
  refusal: RetryRefusal | typeof TIMEOUT_REFUSAL,
  // biome-ignore lint/suspicious/noExplicitAny: any registered tool; input was parsed with its own schema.
  call?: { tool: ToolDefinition<any, any>; input: unknown },
): ToolResult {
  const content = [
    { type: "text" as const, text: `rejected: ${refusal.code}. ${refusal.message}` },
  ];
  const structured =
    "retry_after_s" in refusal ? call?.tool.refusalReceipt?.(call.input, refusal) : undefined;
  return {
    isError: true,
    content,
    ...(structured === undefined ? {} : { structuredContent: structured }),
  };
}
