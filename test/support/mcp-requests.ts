/**
 * JSON-RPC bodies and `POST /mcp` as a 2025-era host sends them, for the suites that talk to
 * `buildMcpApp` in process (`app.request`) with a bearer token and look at the raw response.
 */

/** What `POST /mcp` is sent to: a Hono app (`buildMcpApp`) answering in process. */
export interface McpRequestTarget {
  request(url: string, init: RequestInit): Response | Promise<Response>;
}

/** The protocol header of the 2025-11-25 revision, which a claim-less request is served as. */
export const LEGACY_HEADERS: Readonly<Record<string, string>> = {
  "MCP-Protocol-Version": "2025-11-25",
};

/** `body` (JSON-encoded unless a string) to `on`'s `/mcp` with `token` as bearer. */
export function postMcp(
  on: McpRequestTarget,
  token: string,
  body: unknown,
  headers: Record<string, string> = LEGACY_HEADERS,
): Promise<Response> {
  return Promise.resolve(
    on.request("http://localhost/mcp", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

let ids = 0;

/** A JSON-RPC request with an id no other request of the process carries. */
export const jsonRpcRequest = (method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id: ++ids,
  method,
  params,
});

export const toolCall = (name: string, args: Record<string, unknown>) =>
  jsonRpcRequest("tools/call", { name, arguments: args });

/** A working-profile save of `question` (each question is a new row). */
export const profileSave = (question: string) =>
  toolCall("north__working_profile_answer", { question, answer: "Remembered answer." });

/** The 2026-07-28 revision, which every request of it names in its envelope and headers. */
export const MODERN_REVISION = "2026-07-28";

/** The envelope a 2026-07-28 request carries in `_meta` (SPEC §1). */
export const MODERN_ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A JSON-RPC request of the 2026-07-28 revision: `params` with the envelope. */
export const envelopedRequest = (method: string, params: Record<string, unknown> = {}) =>
  jsonRpcRequest(method, { ...params, _meta: MODERN_ENVELOPE });

/** The headers of a 2026-07-28 request: the revision, its method and (for a call) its name. */
export const modernHeaders = (method: string, name?: string) => ({
  "MCP-Protocol-Version": MODERN_REVISION,
  "Mcp-Method": method,
  ...(name ? { "Mcp-Name": name } : {}),
});

/** A JSON-RPC answer as the suites read it: a result (a tool's receipt) or an error. */
export interface JsonRpcReply {
  result?: {
    isError?: boolean;
    structuredContent?: { code?: string; outcome?: string };
    [key: string]: unknown;
  };
  error?: { code?: number; message?: string; data?: unknown };
}

/**
 * The JSON-RPC message of a `/mcp` answer: the JSON body, or the first frame of an event
 * stream; undefined when the body is empty or is not JSON (an HTTP refusal's text).
 */
export async function replyOf(response: Response): Promise<JsonRpcReply | undefined> {
  const text = await response.text();
  const data = text.startsWith("{") || text.startsWith("[") ? text : text.split("data: ")[1];
  if (!data) return undefined;
  try {
    return JSON.parse(data) as JsonRpcReply;
  } catch {
    return undefined;
  }
}
