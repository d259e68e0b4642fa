import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StdioClientTransport,
  type StdioServerParameters,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * The one place the suites make an MCP client. Which client (`NORTH_TEST_MCP_CLIENT`): the SDK's
 * v1 client on the 2025 handshake (`v1`, the default), or the v2 client pinned to 2026-07-28
 * (`v2-pinned`) or negotiating (`v2-auto`). The v2 client answers to the same calls the suites
 * make, so it stands in typed as the v1 one: a suite runs at either revision unchanged. A suite
 * that needs one client on purpose (the 2025 handshake, an SDK-specific OAuth behaviour)
 * constructs it itself and says why.
 */
export const TEST_MCP_CLIENT = process.env.NORTH_TEST_MCP_CLIENT ?? "v1";
const CLIENTS = ["v1", "v2-pinned", "v2-auto"];
if (!CLIENTS.includes(TEST_MCP_CLIENT)) {
  throw new Error(
    `NORTH_TEST_MCP_CLIENT=${TEST_MCP_CLIENT}: expected one of ${CLIENTS.join(", ")}`,
  );
}

/** The revision the v2 client is pinned to under `v2-pinned`. */
export const MODERN_REVISION = "2026-07-28";

export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface McpClientOptions {
  /** Sent as `Authorization: Bearer …` on every request. */
  token?: string;
  /** An OAuth-bearing client: the transport takes its tokens from here (and refreshes). */
  authProvider?: OAuthClientProvider;
  /** In place of the global fetch, e.g. `app.request` or a fetch that records answers. */
  fetch?: Fetch;
  /** Bounds every request, connect included. */
  timeoutMs?: number;
  name?: string;
}

/**
 * North serves 2026-07-28, so a v2 client, pinned or negotiating, must end up on it: one that
 * fell back to the 2025 handshake would run the suite at the wrong revision and pass.
 */
function assertModern(client: ClientV2): void {
  const era = client.getProtocolEra();
  if (era !== "modern") {
    throw new Error(`NORTH_TEST_MCP_CLIENT=${TEST_MCP_CLIENT} connected on the ${era} era`);
  }
}

function v2Client(name: string): ClientV2 {
  return new ClientV2(
    { name, version: "0.0.0" },
    {
      versionNegotiation: {
        mode: TEST_MCP_CLIENT === "v2-pinned" ? { pin: MODERN_REVISION } : "auto",
      },
    },
  );
}

/** An MCP client connected to `url` over Streamable HTTP, the kind `NORTH_TEST_MCP_CLIENT` names. */
export async function connectMcpClient(
  url: string | URL,
  options: McpClientOptions = {},
): Promise<Client> {
  const { token, authProvider, fetch, timeoutMs, name = "north-test" } = options;
  const transportOptions = {
    ...(fetch ? { fetch } : {}),
    ...(authProvider ? { authProvider } : {}),
    ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  };
  const connectOptions = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
  if (TEST_MCP_CLIENT === "v1") {
    const client = new Client({ name, version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), transportOptions),
      connectOptions,
    );
    return client;
  }
  const client = v2Client(name);
  // The v2 provider interface is the v1 one with optional per-issuer context arguments.
  await client.connect(new TransportV2(new URL(url), transportOptions), connectOptions);
  assertModern(client);
  return client as unknown as Client;
}

/**
 * The one way a suite connects to a running North with an API token: an MCP client on `url`
 * (its `/mcp`), of the kind `NORTH_TEST_MCP_CLIENT` names; every request gives up after
 * `timeoutMs`.
 */
export function connectClient(url: string | URL, token: string, timeoutMs = 30_000) {
  return connectMcpClient(url, { token, timeoutMs, name: "north-test" });
}

/**
 * An MCP client on a spawned `north serve --stdio` (or any stdio server), the kind
 * `NORTH_TEST_MCP_CLIENT` names.
 */
export async function connectStdioClient(
  server: StdioServerParameters,
  options: Pick<McpClientOptions, "name" | "timeoutMs"> = {},
): Promise<Client> {
  const { name = "north-test-stdio", timeoutMs } = options;
  const connectOptions = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
  if (TEST_MCP_CLIENT === "v1") {
    const client = new Client({ name, version: "0.0.0" });
    await client.connect(new StdioClientTransport(server), connectOptions);
    return client;
  }
  const client = v2Client(name);
  await client.connect(new StdioTransportV2(server), connectOptions);
  assertModern(client);
  return client as unknown as Client;
}
