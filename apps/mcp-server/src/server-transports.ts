/**
 * How requests reach North's SDK server (decision 005: this file and server.ts are the only ones
 * that import the SDK): `POST /mcp` for every revision, and `serve --stdio`.
 */
import {
  classifyInboundRequest,
  createMcpHandler,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Server,
  type Transport,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { claimsModernRevision } from "./protocol-revision.ts";

export type ServerBuilder = () => Server;

export interface McpHttpEntryOptions {
  /** Bodies over this are refused 413 (the app's own limit runs first). */
  maxBodyBytes: number;
  /** Requests the SDK refused or failed, for the log (never alters the answer). */
  onerror?: (error: Error) => void;
}

/**
 * `POST /mcp` for every revision North serves, one server per request. A request carrying the
 * 2026-07-28 envelope goes to the SDK's stateless entry, which checks the revision, the
 * `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers against the body and answers
 * `server/discover`; a 2025-era request (initialize, then claim-less calls) gets the
 * Streamable HTTP transport North always served it through, with JSON responses and no session.
 */
export function createMcpHttpEntry(options: McpHttpEntryOptions) {
  const builders = new WeakMap<Request, ServerBuilder>();
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const build = requestInfo && builders.get(requestInfo);
      if (!build) throw new Error("no server builder for this request");
      return build();
    },
    { legacy: "reject", maxRequestBodySize: options.maxBodyBytes, onerror: options.onerror },
  );
  return {
    async serve(request: Request, body: unknown, build: ServerBuilder): Promise<Response> {
      if (isLegacy(request, body)) return serveLegacy(request, body, build(), options.maxBodyBytes);
      builders.set(request, build);
      return modern.fetch(request, { parsedBody: body });
    },
    close: () => modern.close(),
  };
}

/**
 * 2025-era traffic: whatever claims no 2026-07-28 revision (by header or envelope), including a
 * body that is not JSON-RPC at all, which the 2025 transport refuses as it always has (-32700);
 * and what claims one but the SDK's entry classifies as 2025-era. The claim is read first: the
 * SDK's classification parses the body against its schemas, a tenth of a ping's cost.
 */
function isLegacy(request: Request, body: unknown): boolean {
  if (!claimsModernRevision(request, body)) return true;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: request.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: request.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: request.headers.get("mcp-name") ?? undefined,
    body,
  });
  return route.kind === "legacy";
}

async function serveLegacy(
  request: Request,
  body: unknown,
  server: Server,
  maxBodyBytes: number,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: maxBodyBytes,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}

/** A JSON-RPC error for a request refused before the server saw it. */
export interface RefusalError {
  code: number;
  message: string;
  data?: unknown;
}

export interface StdioOptions {
  /**
   * Runs as each message arrives, before the server sees it: undefined delivers it; an error
   * drops it and, for a request, answers it with that error.
   */
  admit: () => Promise<RefusalError | undefined>;
  /** The connection ended (stdin closed). */
  onclose: () => void;
}

/**
 * `serve --stdio`: one connection, pinned by its opening to 2026-07-28 (`server/discover`, then
 * enveloped requests) or to a 2025 revision (`initialize`); the same server either way.
 */
export function serveMcpStdio(build: ServerBuilder, options: StdioOptions) {
  return serveStdio(() => build(), { transport: new AdmittingTransport(options) });
}

/** The stdio transport with `admit` in front of every inbound message. */
class AdmittingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly inner = new StdioServerTransport();

  constructor(private readonly options: StdioOptions) {}

  async start(): Promise<void> {
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.onclose?.();
      this.options.onclose();
    };
    // One message at a time, in the order they came: a refusal that takes longer (it is
    // audited) must not let the next message overtake it.
    let previous: Promise<void> = Promise.resolve();
    this.inner.onmessage = (message) => {
      previous = previous
        .then(() => this.options.admit())
        .then((refusal) => {
          if (!refusal) return this.onmessage?.(message);
          if (isJSONRPCRequest(message)) {
            void this.send({ jsonrpc: "2.0", id: message.id, error: refusal });
          }
        })
        .catch((error: unknown) =>
          this.onerror?.(error instanceof Error ? error : new Error(String(error))),
        );
    };
    await this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
