/**
 * The load generators' MCP client (bench-clients.ts, soak-clients.ts): the official SDK client
 * over Streamable HTTP, signed in with a bearer token, as a host connects to North.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Connected to `url` with `token`; `timeoutMs`, if given, bounds every request. */
export async function connectSdkClient(
  url: string,
  token: string,
  name: string,
  timeoutMs?: number,
): Promise<Client> {
  const client = new Client({ name, version: "0.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
    timeoutMs === undefined ? undefined : { timeout: timeoutMs },
  );
  return client;
}
