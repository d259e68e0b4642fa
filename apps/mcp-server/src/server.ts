import { randomUUID } from "node:crypto";
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  type MessageExtraInfo,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Transport,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import { type Database, isDatabaseUnavailable } from "@north/db";
import { type ZodError, z } from "zod";
import {
  activeCapabilities,
  authorize,
  CAPABILITIES,
  composeInstructions,
} from "./capabilities/index.ts";
import type { CredentialProof } from "./credential-proof.ts";
import type { RateLimiter } from "./limiter.ts";
import type { Logger } from "./logger.ts";
import { describePrompt, describeTool } from "./manifest.ts";
import type { ToolMetrics } from "./metrics.ts";
import type { Principal } from "./principal.ts";
import { envelopesModernRevision } from "./protocol-revision.ts";
import { refusedToolResult, UNAVAILABLE_REFUSAL } from "./refusal.ts";
import type { TenantGate } from "./tenant-gate.ts";
import type { Capability, Fingerprinter, ToolDefinition, ToolResult } from "./tool-definition.ts";
import { InternalToolError, runTool } from "./tool-runner.ts";

export const SERVER_INFO = { name: "north", title: "North", version: "0.1.0" };

/**
 * One JSON Schema validator for the process. The SDK builds a fresh Ajv per `Server` unless given
 * one, and with a server per request that compilation was a tenth of the server's CPU time.
 */
const sharedValidator = new AjvJsonSchemaValidator();

export interface ServerDeps {
  db: Database;
  limiter: RateLimiter;
  logger: Logger;
  fingerprint: Fingerprinter;
  now: () => number;
  /**
   * The capabilities as the composition root built them (`createCapabilities`, with the
   * embedder and the recall budget); default {@link CAPABILITIES}.
   */
  capabilities?: readonly Capability[];
  /**
   * Checked before every tool call when the principal was resolved once for a long-lived
   * connection (stdio): false means the token expired or was revoked since.
   */
  stillAuthorized?: () => Promise<boolean>;
  /** Per-organisation concurrency shared by every request of this replica (HTTP). */
  gate?: TenantGate;
  /** The app's `/metrics` counters (HTTP); absent (stdio), nothing is counted. */
  metrics?: ToolMetrics;
}

/** Issue paths and codes only: a zod message never quotes the value, and neither do we. */
function describeIssues(error: ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`)
    .join("; ");
}

/**
 * The params of each request North answers, read by North rather than by the SDK. The SDK
 * parses a spec request against its own schema before a handler registered by method name runs,
 * and answers a failed parse as -32603 Internal error (typescript-sdk#2284): `arguments: []` or
 * `name: 5` would read as a server fault. Handlers are therefore registered with a schema that
 * accepts any params, and parse them here into -32602 Invalid params naming what is wrong.
 * Built once: a zod schema costs more to build than to run.
 */
const ANY_PARAMS = { params: z.unknown() };
const cursorParams = z.looseObject({ cursor: z.string().optional() }).optional();
const CALL_PARAMS = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});
const GET_PARAMS = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.string()).optional(),
});
/** What the SDK reads of an `initialize` before answering it. */
const INITIALIZE_PARAMS = z.looseObject({
  protocolVersion: z.string(),
  capabilities: z.looseObject({}),
  clientInfo: z.looseObject({ name: z.string(), version: z.string() }),
});

/** The params as North reads them, or a -32602 Invalid params naming what is wrong. */
function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid params: ${describeIssues(parsed.error)}`,
    );
  }
  return parsed.data;
}

/**
 * Two requests the SDK mishandles before any handler of ours runs: an `initialize` whose params
 * do not parse (the SDK registers that handler itself and answers -32603 Internal error), now
 * -32602; and a task-augmented request (`params.task`), which North, offering no tasks, runs as
 * a plain one, as the MCP tasks utility requires of a receiver that did not declare them.
 */
class NorthServer extends Server {
  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      // An initialize enveloped as 2026-07-28 asks for a removed method: the SDK's 404. One whose
      // envelope names a 2025 revision is a 2025 initialize, checked here like any other.
      if (
        (message as { method?: unknown }).method === "initialize" &&
        isJSONRPCRequest(message) &&
        !envelopesModernRevision(message)
      ) {
        const parsed = INITIALIZE_PARAMS.safeParse(message.params);
        if (!parsed.success) {
          void transport.send({
            jsonrpc: "2.0",
            id: message.id,
            error: {
              code: ProtocolErrorCode.InvalidParams,
              message: `Invalid params: ${describeIssues(parsed.error)}`,
            },
          });
          return;
        }
      }
      deliver?.(withoutTask(message), extra);
    };
  }
}

function withoutTask<T extends JSONRPCMessage>(message: T): T {
  // The cheap test first: almost no message carries a task.
  const claimed = (message as { params?: unknown }).params;
  if (!claimed || typeof claimed !== "object" || !("task" in claimed)) return message;
  if (!isJSONRPCRequest(message) || !message.params) return message;
  const { task: _ignored, ...params } = message.params;
  return { ...message, params };
}

/**
 * The instructions for a set of active capabilities, composed once per set (there are at most a
 * few dozen: one per combination of scopes) instead of once per request.
 */
const composed = new WeakMap<readonly Capability[], Map<string, string>>();
function instructionsFor(all: readonly Capability[], active: readonly Capability[]): string {
  const bySet = composed.get(all) ?? new Map<string, string>();
  composed.set(all, bySet);
  const key = active.map((c) => c.id).join(" ");
  const known = bySet.get(key);
  if (known !== undefined) return known;
  const instructions = composeInstructions(active);
  bySet.set(key, instructions);
  return instructions;
}

const SAFE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const nameForError = (name: string) => (SAFE_NAME.test(name) ? name : "(unprintable name)");

/**
 * How long a 2026-07-28 client may reuse a tools/list, prompts/list or server/discover answer:
 * a minute, and only for itself (`private`), since what is listed depends on the principal.
 */
export const LIST_CACHE_HINT = { ttlMs: 60_000, cacheScope: "private" } as const;

/** What varies per request besides the principal. */
export interface McpRequest {
  requestId?: string;
  runId?: string;
  /** A remembered principal's proof (decision 036), which its tool call's transaction sends. */
  proof?: CredentialProof;
}

/**
 * A fresh MCP server for one request and one principal. Only the principal's active capabilities
 * are listed and callable; a tool outside them is an unknown tool. This file is the only place
 * that speaks the SDK's server API.
 */
export function createMcpServer(
  principal: Principal,
  deps: ServerDeps,
  request: McpRequest = {},
): Server {
  const all = deps.capabilities ?? CAPABILITIES;
  const capabilities = activeCapabilities(principal, all);
  /** The tool or prompt of that name when the principal may use it; else unknown, as it is unlisted. */
  const allowedTool = (name: string) => {
    const decision = authorize(principal, "tools/call", name, all);
    return decision.allowed ? decision.capability.tools.find((t) => t.name === name) : undefined;
  };
  const allowedPrompt = (name: string) => {
    const decision = authorize(principal, "prompts/get", name, all);
    return decision.allowed ? decision.capability.prompts.find((p) => p.name === name) : undefined;
  };
  const server = new NorthServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false } },
    instructions: instructionsFor(all, capabilities),
    jsonSchemaValidator: sharedValidator,
    cacheHints: {
      "tools/list": LIST_CACHE_HINT,
      "prompts/list": LIST_CACHE_HINT,
      "server/discover": LIST_CACHE_HINT,
    },
  });

  server.setRequestHandler("tools/list", ANY_PARAMS, async (params) => {
    parseParams(cursorParams, params);
    return { tools: capabilities.flatMap((c) => c.tools).map(describeTool) };
  });

  server.setRequestHandler("tools/call", ANY_PARAMS, async (params) => {
    const started = deps.now();
    const call = parseParams(CALL_PARAMS, params);
    const tool = allowedTool(call.name);
    if (!tool) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool ${nameForError(call.name)}: it does not exist or this token's scopes do not include it.`,
      );
    }
    return callTool(tool, call.arguments, { principal, deps, request, started });
  });

  server.setRequestHandler("prompts/list", ANY_PARAMS, async (params) => {
    parseParams(cursorParams, params);
    return { prompts: capabilities.flatMap((c) => c.prompts).map(describePrompt) };
  });

  server.setRequestHandler("prompts/get", ANY_PARAMS, async (params) => {
    const get = parseParams(GET_PARAMS, params);
    const prompt = allowedPrompt(get.name);
    if (!prompt) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown prompt ${nameForError(get.name)}: it does not exist or this token's scopes do not include it.`,
      );
    }
    const parsed = prompt.argsSchema.safeParse(get.arguments ?? {});
    if (!parsed.success) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid arguments for prompt ${prompt.name}: ${describeIssues(parsed.error)}`,
      );
    }
    return {
      description: prompt.description,
      messages: prompt.render(parsed.data).map((m) => ({
        role: m.role,
        content: { type: "text" as const, text: m.text },
      })),
    };
  });

  return server;
}

// biome-ignore lint/suspicious/noExplicitAny: any registered tool; its input is parsed here.
type AnyTool = ToolDefinition<any, any>;

interface CallContext {
  principal: Principal;
  deps: ServerDeps;
  request: McpRequest;
  /** When the call arrived, on `deps.now`'s clock. */
  started: number;
}

/**
 * A `tools/call` of a tool this principal may call: stdio's token re-check, the input against
 * the tool's schema, then the central runner. A failure of ours reaches the client as a bare
 * internal error.
 */
async function callTool(
  tool: AnyTool,
  args: Record<string, unknown> | undefined,
  { principal, deps, request, started }: CallContext,
): Promise<ToolResult> {
  if (deps.stillAuthorized) {
    // stdio re-checks its token before each call; an outage there is the same retryable
    // NORTH_UNAVAILABLE a call meets in its transaction (decision 022), not an internal error.
    const authorized = await deps.stillAuthorized().catch((error: unknown) => {
      if (isDatabaseUnavailable(error)) return "unavailable" as const;
      throw error;
    });
    if (authorized === "unavailable") {
      deps.metrics?.toolCall(tool.name, "unavailable", (deps.now() - started) / 1000);
      // The receipt echoes fields of the input (a question id): only once they are valid.
      const input = tool.inputSchema.safeParse(args ?? {});
      return refusedToolResult(UNAVAILABLE_REFUSAL, {
        tool,
        input: input.success ? input.data : {},
      });
    }
    if (!authorized) {
      throw new ProtocolError(-32001, "Unauthorized: the token expired or was revoked.");
    }
  }
  const requestId = request.requestId ?? randomUUID();
  const parsed = tool.inputSchema.safeParse(args ?? {});
  if (!parsed.success) {
    deps.metrics?.toolCall(tool.name, "invalid_arguments", (deps.now() - started) / 1000);
    return {
      isError: true,
      content: [
        {
          type: "text",
          text: `Invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}. Nothing was saved.`,
        },
      ],
    };
  }
  try {
    return await runTool(tool, parsed.data, {
      db: deps.db,
      limiter: deps.limiter,
      logger: deps.logger,
      fingerprint: deps.fingerprint,
      now: deps.now,
      principal,
      requestId,
      runId: request.runId ?? `request:${requestId}`,
      gate: deps.gate,
      metrics: deps.metrics,
      proof: request.proof,
    });
  } catch (error) {
    if (!(error instanceof InternalToolError)) {
      deps.logger.error({ requestId, tool: tool.name }, "tool runner failed");
    }
    // The SDK answers an error without a numeric code as JSON-RPC -32603 with this message,
    // unprefixed; nothing about the failure itself leaves the process.
    throw new Error("Internal error");
  }
}

/** Builds the server for one request (HTTP) or one connection (stdio), whichever era it speaks. */
