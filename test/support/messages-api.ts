import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A tool call the stand-in model makes when it is offered a tool whose name ends with `tool`. */
export interface ScriptedToolUse {
  tool: string;
  input: Record<string, unknown>;
}

/** A Messages API request body as Claude Code sends it (the fields the tests read). */
export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  system?: string | { type: string; text: string }[];
  tools?: { name: string; description?: string; input_schema?: Record<string, unknown> }[];
  messages?: { role: string; content: unknown }[];
  [key: string]: unknown;
}

/** A tool result Claude Code sent back, as text. */
export interface SeenToolResult {
  toolName: string;
  /** A string content as sent; an array of blocks as JSON (see {@link toolResultText}). */
  text: string;
  isError: boolean;
}

/** A `tool_result` block of a request: its tool (named by the call it answers) and its content. */
export interface ToolResultBlock {
  toolName: string;
  /** Exactly as sent: a string or an array of blocks (read it with {@link toolResultText}). */
  content: unknown;
  isError: boolean;
}

/** The tool results a request's last user message carries, named by the calls they answer. */
export function toolResultBlocks(request: MessagesRequest): ToolResultBlock[] {
  const names = new Map<string, string>();
  for (const message of request.messages ?? []) {
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const block of message.content as { type?: string; id?: string; name?: string }[]) {
      if (block.type === "tool_use") names.set(String(block.id), String(block.name));
    }
  }
  const last = request.messages?.at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content)) return [];
  return (last.content as Record<string, unknown>[])
    .filter((part) => part.type === "tool_result")
    .map((part) => ({
      toolName: names.get(String(part.tool_use_id)) ?? "",
      content: part.content,
      isError: part.is_error === true,
    }));
}

/**
 * What the model reads of a tool result's `content`: a string as it is; an array of blocks as
 * their texts joined by newlines (a block that is not text, e.g. an image, as its JSON).
 */
export function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : JSON.stringify(content);
  return content
    .map((block: { type?: string; text?: unknown }) =>
      block?.type === "text" && typeof block.text === "string" ? block.text : JSON.stringify(block),
    )
    .join("\n");
}

/** Every text a request carries: its system blocks, then each message's text, in order. */
export function requestText(request: MessagesRequest): string {
  const system =
    typeof request.system === "string"
      ? [request.system]
      : (request.system ?? []).map((block) => block.text);
  const messages = (request.messages ?? []).map((message) => {
    if (!Array.isArray(message.content)) return toolResultText(message.content);
    return (message.content as { type?: string; text?: string; content?: unknown }[])
      .map((block) =>
        block.type === "tool_result"
          ? toolResultText(block.content)
          : block.type === "text"
            ? (block.text ?? "")
            : JSON.stringify(block),
      )
      .join("\n");
  });
  return [...system, ...messages].join("\n\n");
}

/** How many characters of text a count_tokens request holds (the CLI's own estimate: 4 a token). */
function countedCharacters(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((sum, item) => sum + countedCharacters(item), 0);
  if (value && typeof value === "object") {
    return Object.entries(value).reduce(
      (sum, [key, item]) => sum + (key === "type" ? 0 : countedCharacters(item)),
      0,
    );
  }
  return 0;
}

/** A stand-in for Anthropic's Messages API, scripted to make one tool call and then answer. */
export interface MessagesApi {
  /** `http://127.0.0.1:PORT`, for ANTHROPIC_BASE_URL. */
  url: string;
  /** The tool names offered to the model, per request. */
  offeredTools: string[][];
  /** The tool results sent back to the model. */
  toolResults: SeenToolResult[];
  /** Every request body received, in order (system prompt, tools, messages). */
  requests: MessagesRequest[];
  /**
   * The token counts the CLI asked for (`/v1/messages/count_tokens`, before it decides whether a
   * large tool result goes to a file), kept apart from {@link requests}: they are no model turn.
   */
  countTokens: MessagesRequest[];
  /** The next conversation offered `tool` gets one call to it with `input`. */
  script(use: ScriptedToolUse): void;
  /** Answers every request with `responder` from now on (`null` restores the default). */
  respond(responder: Responder | null): void;
  close(): Promise<void>;
}

const readJson = (req: IncomingMessage) =>
  new Promise<MessagesRequest>((resolve) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(body) as MessagesRequest);
      } catch {
        resolve({});
      }
    });
  });

/** One content block of the stand-in model's answer. */
export type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/**
 * A scripted model: given each request (and the tool results it carries), the blocks to answer
 * with — tool calls, text, or both — or `undefined` to fall back to the single-call script.
 * Tool calls in the answer may leave `id` empty; the stand-in numbers them.
 */
export type Responder = (
  request: MessagesRequest,
  results: SeenToolResult[],
) => Block[] | undefined;

/** A message's content blocks, as server-sent events in the API's streaming order. */
function streamEvents(blocks: Block[], stopReason: string): string {
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: "msg_stand_in",
          type: "message",
          role: "assistant",
          model: "claude-stand-in",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      },
    ],
  ];
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } },
      ]);
    } else {
      events.push([
        "content_block_start",
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        },
      ]);
      events.push([
        "content_block_delta",
        {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
        },
      ]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 1 },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events
    .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}

/** The tool results in a request's last user message. */
function toolResultsOf(request: MessagesRequest, names: Map<string, string>): SeenToolResult[] {
  const last = request.messages?.at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content)) return [];
  return (last.content as Record<string, unknown>[])
    .filter((part) => part.type === "tool_result")
    .map((part) => ({
      toolName: names.get(String(part.tool_use_id)) ?? "",
      text: typeof part.content === "string" ? part.content : JSON.stringify(part.content ?? ""),
      isError: part.is_error === true,
    }));
}

/**
 * Starts the stand-in: `POST /v1/messages` answers, streamed or not, with a call to the scripted
 * tool when the request offers it and has not had its result yet, else with a short text.
 */
export async function startMessagesApi(): Promise<MessagesApi> {
  const offeredTools: string[][] = [];
  const toolResults: SeenToolResult[] = [];
  const toolNames = new Map<string, string>();
  const requests: MessagesRequest[] = [];
  const countTokens: MessagesRequest[] = [];
  let pending: ScriptedToolUse | null = null;
  let responder: Responder | null = null;
  let calls = 0;
  const server: Server = createServer(async (req, res) => {
    if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
      res.writeHead(404, { "content-type": "application/json" }).end("{}");
      return;
    }
    const request = await readJson(req);
    if (req.url.startsWith("/v1/messages/count_tokens")) {
      // As the real API would count it (about four characters a token), so the CLI's size
      // checks on a large result behave as they do against Anthropic, not as if it were empty.
      countTokens.push(request);
      const tokens = Math.ceil(countedCharacters([request.system, request.messages]) / 4);
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ input_tokens: tokens }));
      return;
    }
    requests.push(request);
    const offered = (request.tools ?? []).map((tool) => tool.name);
    offeredTools.push(offered);
    const results = toolResultsOf(request, toolNames);
    toolResults.push(...results);
    const name = pending ? offered.find((tool) => tool.endsWith(pending?.tool ?? "")) : undefined;
    let blocks: Block[];
    let stop = "end_turn";
    const scripted = responder?.(request, results);
    if (scripted) {
      blocks = scripted.map((block) => {
        if (block.type !== "tool_use") return block;
        const id = block.id || `toolu_stand_in_${++calls}`;
        toolNames.set(id, block.name);
        return { ...block, id };
      });
      if (blocks.some((block) => block.type === "tool_use")) stop = "tool_use";
    } else if (pending && name && results.length === 0) {
      const id = `toolu_stand_in_${++calls}`;
      toolNames.set(id, name);
      blocks = [{ type: "tool_use", id, name, input: pending.input }];
      stop = "tool_use";
      pending = null;
    } else {
      blocks = [{ type: "text", text: "Done." }];
    }
    if (request.stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(streamEvents(blocks, stop));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: "msg_stand_in",
        type: "message",
        role: "assistant",
        model: "claude-stand-in",
        content: blocks,
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    offeredTools,
    toolResults,
    requests,
    countTokens,
    script: (use) => {
      pending = use;
    },
    respond: (next) => {
      responder = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
