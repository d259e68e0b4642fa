import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { createMetadataFetch } from "@north/mcp-server";
import { selfSignedCertificate } from "./tls.ts";

/** Claude Code's client id against every MCP server that supports metadata documents. */
export const CLAUDE_CODE_CLIENT_ID = "https://claude.ai/oauth/claude-code-client-metadata";

/**
 * Claude Code's Client ID Metadata Document as claude.ai publishes it: a public client whose
 * redirect URIs are loopback without a port (the CLI listens on a port it picks, RFC 8252 §7.3).
 */
export const CLAUDE_CODE_DOCUMENT = {
  client_id: CLAUDE_CODE_CLIENT_ID,
  client_name: "Claude Code",
  redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

/** How the stand-in host answers one path: a response, a dropped connection, or nothing ever. */
export type HostAnswer =
  | { status: number; headers?: Record<string, string>; body?: string }
  | "reset"
  | "hang";

/** A stand-in for a metadata document's host (claude.ai by default), on 127.0.0.2. */
export interface MetadataHost {
  hostname: string;
  /** How the host answers `path` from now on (unknown paths get 404). */
  answer(path: string, answer: HostAnswer): void;
  /** Serves `document` as JSON at `path`. */
  serve(path: string, document: Record<string, unknown>): void;
  /**
   * The transport North uses: the real one, with the test's DNS (the hostname is 127.0.0.2,
   * the one special address it lets through) and this server's port in place of 443, so
   * client ids keep their real form (`https://claude.ai/oauth/…`).
   */
  fetch: ReturnType<typeof createMetadataFetch>;
  /** The paths asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

const HOST_ADDRESS = "127.0.0.2";

/** Starts a {@link MetadataHost}; Claude Code's document is served at its real path. */
export async function startMetadataHost(
  hostname = "claude.ai",
  options: { timeoutMs?: number } = {},
): Promise<MetadataHost> {
  const { cert, key } = selfSignedCertificate(hostname);
  const answers = new Map<string, HostAnswer>();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createHttpsServer({ cert, key }, (req, res) => {
    requests.push(req.url ?? "");
    const answer = answers.get(req.url ?? "") ?? { status: 404 };
    if (answer === "hang") return;
    if (answer === "reset") {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? "");
  });
  server.on("secureConnection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST_ADDRESS, resolve));
  const port = (server.address() as AddressInfo).port;
  const transport = createMetadataFetch({
    timeoutMs: options.timeoutMs,
    lookup: async (name) => (name === hostname ? [{ address: HOST_ADDRESS, family: 4 }] : []),
    allowAddress: (ip) => ip === HOST_ADDRESS,
    tlsCa: cert,
  });
  const serve = (path: string, document: Record<string, unknown>) =>
    answers.set(path, {
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(document),
    });
  serve(new URL(CLAUDE_CODE_CLIENT_ID).pathname, CLAUDE_CODE_DOCUMENT);
  return {
    hostname,
    answer: (path, answer) => answers.set(path, answer),
    serve,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === hostname && url.port === "") url.port = String(port);
      return transport(url, init);
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
