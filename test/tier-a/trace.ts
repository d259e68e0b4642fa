/**
 * What one `claude -p --output-format stream-json --verbose` run shows: the assistant's text and
 * tool calls in order, each call's result as Claude Code handed it back (for North's tools, the
 * receipt: the `structuredContent` JSON), the session id to resume, and how the run ended.
 */

/** Claude Code's name for North's tools, `mcp__<server>__<tool>`, for the server named north. */
export const SERVER_PREFIX = "mcp__north__";

/** One tool call the model made, and what came back. */
export interface ToolCall {
  id: string;
  /** North's own name (`north__working_profile_answer`), or the host tool's (`Bash`). */
  tool: string;
  input: Record<string, unknown>;
  /** The lawyer turn it belongs to (0-based). */
  turn: number;
  result?: ToolResult;
}

export interface ToolResult {
  text: string;
  /** The result as JSON when it is one (North's receipts and reads). */
  json?: Record<string, unknown>;
  isError: boolean;
  /** When Claude Code received it (ISO 8601). */
  at?: string;
}

export type TraceEvent =
  | { kind: "text"; turn: number; text: string }
  | { kind: "call"; turn: number; call: ToolCall };

/** One lawyer turn: what they typed and everything the run showed. */
export interface TurnTrace {
  turn: number;
  says: string;
  sessionId: string;
  /** North's status in Claude Code's init event (`connected`, `failed`, …). */
  northStatus: string;
  events: TraceEvent[];
  /** The run's final answer (the `result` event). */
  final: string;
  exitCode: number | null;
  isError: boolean;
  /** Tool calls Claude Code refused for want of permission. */
  denials: unknown[];
  stderr: string;
}

type Json = Record<string, unknown>;

/** A tool result's content as text: a string, or its text blocks joined. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? "");
  return content
    .map((part: Json) => (part.type === "text" ? String(part.text) : JSON.stringify(part)))
    .join("\n");
}

function asJson(text: string): Json | undefined {
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A receipt read from its one-line text rendering (`conflict: question_id=… answer_version=2
 * NORTH_CONFLICT. …`): Claude Code hands an error result to the model as its text only.
 */
function receiptFromText(text: string): Json | undefined {
  const head = /^(created|updated|noop|conflict|rejected)\b/.exec(text.trim());
  if (!head) return undefined;
  const receipt: Json = { outcome: head[1] };
  const id = /question_id=(\S+)/.exec(text)?.[1];
  if (id && id !== "none") receipt.question_id = id;
  const version = /answer_version=(\d+)/.exec(text)?.[1];
  if (version) receipt.answer_version = Number(version);
  const code = /\bNORTH_[A-Z_]+/.exec(text)?.[0];
  if (code) receipt.code = code;
  const wait = /retry_after_s\W+(\d+)|\bwait (\d+) ?s\b/i.exec(text);
  if (wait) receipt.retry_after_s = Number(wait[1] ?? wait[2]);
  return receipt;
}

/**
 * A tool result as JSON: North's structuredContent (what Claude Code passes for a result that
 * has one), content blocks holding it, or a receipt read from its text.
 */
export function resultJson(text: string): Json | undefined {
  const direct = asJson(text);
  if (direct) return direct;
  try {
    const blocks = JSON.parse(text) as { type?: string; text?: string }[];
    if (Array.isArray(blocks)) {
      for (const block of blocks) {
        const inner = block.type === "text" && block.text ? resultJson(block.text) : undefined;
        if (inner) return inner;
      }
    }
  } catch {}
  return receiptFromText(text);
}

/** Parses one run's stream-json output into a {@link TurnTrace}. */
export function parseRun(
  run: { code: number | null; stdout: string; stderr: string },
  turn: number,
  says: string,
): TurnTrace {
  const trace: TurnTrace = {
    turn,
    says,
    sessionId: "",
    northStatus: "absent",
    events: [],
    final: "",
    exitCode: run.code,
    isError: run.code !== 0,
    denials: [],
    stderr: run.stderr,
  };
  const calls = new Map<string, ToolCall>();
  for (const line of run.stdout.split("\n")) {
    const event = line.startsWith("{") ? asJson(line) : undefined;
    if (!event) continue;
    if (typeof event.session_id === "string") trace.sessionId = event.session_id;
    if (event.type === "system" && event.subtype === "init") {
      const servers = (event.mcp_servers ?? []) as Json[];
      const north = servers.find((server) => server.name === "north");
      trace.northStatus = String(north?.status ?? "absent");
    } else if (event.type === "assistant") {
      for (const block of ((event.message as Json)?.content ?? []) as Json[]) {
        if (block.type === "text" && String(block.text).trim()) {
          trace.events.push({ kind: "text", turn, text: String(block.text) });
        } else if (block.type === "tool_use") {
          const call: ToolCall = {
            id: String(block.id),
            tool: String(block.name).replace(SERVER_PREFIX, ""),
            input: (block.input ?? {}) as Json,
            turn,
          };
          calls.set(call.id, call);
          trace.events.push({ kind: "call", turn, call });
        }
      }
    } else if (event.type === "user") {
      const content = (event.message as Json)?.content;
      for (const block of (Array.isArray(content) ? content : []) as Json[]) {
        if (block.type !== "tool_result") continue;
        const call = calls.get(String(block.tool_use_id));
        if (!call) continue;
        const text = resultText(block.content);
        call.result = {
          text,
          json: resultJson(text),
          isError: block.is_error === true,
          at: typeof event.timestamp === "string" ? event.timestamp : undefined,
        };
      }
    } else if (event.type === "result") {
      trace.final = String(event.result ?? "");
      trace.isError = event.is_error === true || run.code !== 0;
      trace.denials = (event.permission_denials ?? []) as unknown[];
    }
  }
  return trace;
}

const excerpt = (text: string, max = 400) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;

/** A turn as lines a person reads when a case missed: what was said, called and received. */
export function describeTurn(trace: TurnTrace): string[] {
  const lines = [
    `turn ${trace.turn + 1}: lawyer: ${excerpt(trace.says, 200)}`,
    `  session ${trace.sessionId || "?"}, North ${trace.northStatus}, exit ${trace.exitCode}${trace.isError ? " (error)" : ""}`,
  ];
  for (const event of trace.events) {
    if (event.kind === "text") {
      lines.push(`  assistant: ${excerpt(event.text).replaceAll("\n", " ")}`);
      continue;
    }
    const { call } = event;
    lines.push(`  call ${call.tool} ${excerpt(JSON.stringify(call.input), 300)}`);
    lines.push(
      call.result
        ? `    → ${call.result.isError ? "error " : ""}${excerpt(call.result.text, 300).replaceAll("\n", " ")}`
        : "    → no result",
    );
  }
  if (trace.denials.length) lines.push(`  permission denials: ${JSON.stringify(trace.denials)}`);
  if (trace.isError && trace.stderr.trim()) lines.push(`  stderr: ${excerpt(trace.stderr, 600)}`);
  return lines;
}
