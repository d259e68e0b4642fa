import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Prompt,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { type Database, isDatabaseUnavailable } from "@north/db";
import { type ZodError, z } from "zod";
import {
  type ActivationOptions,
  activeCapabilities,
  CAPABILITIES,
  capabilityActivations,
  composeInstructions,
} from "./capabilities/index.ts";
import type { RateLimiter } from "./limiter.ts";
import type { Logger } from "./logger.ts";
import type { ToolMetrics } from "./metrics.ts";
import type { Principal } from "./principal.ts";
import type { TenantGate } from "./tenant-gate.ts";
import type {
  Capability,
  Embedder,
  Fingerprinter,
  PromptDefinition,
  ToolDefinition,
} from "./tool-definition.ts";
import { InternalToolError, runTool } from "./tool-runner.ts";
import { unavailableToolResult } from "./unavailable.ts";

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
  capabilities?: readonly Capability[];
  /**
   * Checked before every tool call when the principal was resolved once for a long-lived
   * connection (stdio): false means the token expired or was revoked since.
   */
  stillAuthorized?: () => Promise<boolean>;
  embedder?: Embedder;
  /** Token budget for fenced memory blocks (recall, briefing). */
  recallTokenBudget?: number;
  /** Per-organisation concurrency shared by every request of this replica (HTTP). */
  gate?: TenantGate;
  /** The app's `/metrics` counters (HTTP); absent (stdio), nothing is counted. */
  metrics?: ToolMetrics;
}

export const DEFAULT_RECALL_TOKEN_BUDGET = 1_500;

// biome-ignore lint/suspicious/noExplicitAny: any registered tool.
type AnyTool = ToolDefinition<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: any registered prompt.
type AnyPrompt = PromptDefinition<any>;

const described = new WeakMap<AnyTool, Tool>();

/**
 * A tool as the model receives it in tools/list (and in GET /manifest). Definitions are
 * immutable, so the JSON Schema conversion runs once per tool per process, not per request.
 */
export function describeTool(tool: AnyTool): Tool {
  const cached = described.get(tool);
  if (cached) return cached;
  const published: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.inputSchema, {
      target: "draft-7",
      io: "input",
    }) as Tool["inputSchema"],
    outputSchema: z.toJSONSchema(tool.outputSchema, {
      target: "draft-7",
      io: "output",
    }) as Tool["outputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
  described.set(tool, published);
  return published;
}

/** A prompt as the model receives it in prompts/list. */
export function describePrompt(prompt: AnyPrompt): Prompt {
  const shape = prompt.argsSchema.shape as Record<string, z.ZodType>;
  return {
    name: prompt.name,
    title: prompt.title,
    description: prompt.description,
    arguments: Object.entries(shape).map(([name, schema]) => ({
      name,
      description: schema.description,
      required: !schema.safeParse(undefined).success,
    })),
  };
}

/**
 * What this principal's model receives: instructions, tools and prompts (SPEC §3), and every
 * capability with whether it is active and, when not, why.
 */
export function composeManifest(
  principal: Principal,
  all: readonly Capability[] = CAPABILITIES,
  options: ActivationOptions = { embedder: false },
) {
  const capabilities = activeCapabilities(principal, all);
  return {
    instructions: composeInstructions(capabilities),
    tools: capabilities.flatMap((c) => c.tools).map(describeTool),
    prompts: capabilities.flatMap((c) => c.prompts).map(describePrompt),
    capabilities: capabilityActivations(principal, options, all),
  };
}

/** Issue paths and codes only: a zod message never quotes the value, and neither do we. */
function describeIssues(error: ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`)
    .join("; ");
}

/**
 * A request schema naming only the method. The SDK parses a request against the schema its
 * handler was registered with before the handler runs, and answers a failed parse as -32603
 * Internal error (typescript-sdk#2284): `arguments: []` or `name: 5` would read as a server
 * fault. Each handler below parses its request with `parseRequest`, which answers -32602.
 */
const methodOnly = <M extends string>(method: M) => z.looseObject({ method: z.literal(method) });
/** Built once: a zod schema costs more to build than to run, and every request registers these. */
const TOOLS_LIST = methodOnly("tools/list");
const TOOLS_CALL = methodOnly("tools/call");
const PROMPTS_LIST = methodOnly("prompts/list");
const PROMPTS_GET = methodOnly("prompts/get");

/** The request as the SDK's schema reads it, or a -32602 Invalid params naming what is wrong. */
function parseRequest<S extends z.ZodType>(schema: S, request: unknown): z.output<S> {
  const parsed = schema.safeParse(request);
  if (!parsed.success) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid params: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}

/**
 * Two requests the SDK mishandles before any handler of ours runs, both answered -32603 Internal
 * error: an `initialize` whose params do not parse (the SDK registers that handler itself), now
 * -32602; and a task-augmented request (`params.task`), which North, offering no tasks, runs as
 * a plain one, as the MCP tasks utility requires of a receiver that did not declare them.
 */
class NorthServer extends Server {
  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message) && message.method === "initialize") {
        const parsed = InitializeRequestSchema.safeParse(message);
        if (!parsed.success) {
          void transport.send({
            jsonrpc: "2.0",
            id: message.id,
            error: {
              code: ErrorCode.InvalidParams,
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
  if (!isJSONRPCRequest(message) || !message.params || !("task" in message.params)) return message;
  const { task: _ignored, ...params } = message.params;
  return { ...message, params };
}

const SAFE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const nameForError = (name: string) => (SAFE_NAME.test(name) ? name : "(unprintable name)");

/**
 * A fresh MCP server for one request and one principal. Only the principal's active capabilities
 * are listed and callable; a tool outside them is an unknown tool. This file is the only place
 * that speaks the SDK's server API.
 */
export function createMcpServer(
  principal: Principal,
  deps: ServerDeps,
  request: { requestId?: string; runId?: string } = {},
): Server {
  const capabilities = activeCapabilities(principal, deps.capabilities ?? CAPABILITIES);
  const tools = new Map<string, AnyTool>(
    capabilities.flatMap((c) => c.tools).map((t) => [t.name, t]),
  );
  const prompts = new Map<string, AnyPrompt>(
    capabilities.flatMap((c) => c.prompts).map((p) => [p.name, p]),
  );
  const server = new NorthServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false } },
    instructions: composeInstructions(capabilities),
    jsonSchemaValidator: sharedValidator,
  });

  server.setRequestHandler(TOOLS_LIST, async (message) => {
    parseRequest(ListToolsRequestSchema, message);
    return { tools: [...tools.values()].map(describeTool) };
  });

  server.setRequestHandler(TOOLS_CALL, async (message) => {
    const started = deps.now();
    const call = parseRequest(CallToolRequestSchema, message);
    const tool = tools.get(call.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${nameForError(call.params.name)}: it does not exist or this token's scopes do not include it.`,
      );
    }
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
        const input = tool.inputSchema.safeParse(call.params.arguments ?? {});
        return unavailableToolResult(tool, input.success ? input.data : {});
      }
      if (!authorized) {
        throw new McpError(-32001, "Unauthorized: the token expired or was revoked.");
      }
    }
    const requestId = request.requestId ?? randomUUID();
    const parsed = tool.inputSchema.safeParse(call.params.arguments ?? {});
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
        embedder: deps.embedder,
        recallTokenBudget: deps.recallTokenBudget ?? DEFAULT_RECALL_TOKEN_BUDGET,
        gate: deps.gate,
        metrics: deps.metrics,
      });
    } catch (error) {
      if (!(error instanceof InternalToolError)) {
        deps.logger.error({ requestId, tool: tool.name }, "tool runner failed");
      }
      // The SDK answers an error without a numeric code as JSON-RPC -32603 with this message,
      // unprefixed; nothing about the failure itself leaves the process.
      throw new Error("Internal error");
    }
  });

  server.setRequestHandler(PROMPTS_LIST, async (message) => {
    parseRequest(ListPromptsRequestSchema, message);
    return { prompts: [...prompts.values()].map(describePrompt) };
  });

  server.setRequestHandler(PROMPTS_GET, async (message) => {
    const get = parseRequest(GetPromptRequestSchema, message);
    const prompt = prompts.get(get.params.name);
    if (!prompt) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown prompt ${nameForError(get.params.name)}: it does not exist or this token's scopes do not include it.`,
      );
    }
    const parsed = prompt.argsSchema.safeParse(get.params.arguments ?? {});
    if (!parsed.success) {
      throw new McpError(
        ErrorCode.InvalidParams,
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
