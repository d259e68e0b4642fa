import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A real HTTP server in the test process that speaks the OpenAI embeddings API
 * (`POST /v1/embeddings` `{ model, input }` → `{ data: [{ embedding, index }], model }`), with
 * deterministic vectors, and that can be told how to answer each request: the provider under
 * test meets real sockets, real status codes and real stalls.
 */

/** How the server answers one request. */
export type EmbeddingsAnswer =
  /** 200 with a vector per input (`dimensions` long: the server's own by default). */
  | { kind: "ok"; dimensions?: number; delayMs?: number }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  /** The socket is destroyed without an answer. */
  | { kind: "drop" }
  /** Never answers (until the client gives up or the server closes). */
  | { kind: "stall" }
  /** Sends 200 and its headers, then stalls in the middle of the body. */
  | { kind: "stall-body" }
  /** 200 with this exact body (non-JSON, NaN, 1e999, wrong shapes…). */
  | { kind: "raw"; body: string };

export interface SeenRequest {
  path: string;
  authorization: string | undefined;
  model: unknown;
  input: string[];
  /** When the request arrived (epoch ms). */
  at: number;
  /** True once the client went away before an answer was sent (an aborted request). */
  aborted: boolean;
}

export interface EmbeddingsServer {
  /** The base URL to configure (`NORTH_EMBEDDINGS_URL`), ending in `/v1`. */
  url: string;
  dimensions: number;
  requests: SeenRequest[];
  /** Queues answers for the next requests, one each, in order. */
  script(...answers: EmbeddingsAnswer[]): void;
  /** How to answer once the queue is empty (`{ kind: "ok" }` at first). */
  always(answer: EmbeddingsAnswer): void;
  /** Empties the queue and the requests seen, and answers `ok` again. */
  reset(): void;
  close(): Promise<void>;
}

/** The server's vector for a text: its words hashed into `dimensions` slots, unit length. */
export function embedText(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [text];
  for (const word of words) {
    const slot = createHash("sha256").update(word).digest().readUInt32BE(0) % dimensions;
    vector[slot] = (vector[slot] ?? 0) + 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of request) body += chunk;
  return body;
}

export async function startEmbeddingsServer(dimensions = 16): Promise<EmbeddingsServer> {
  const queue: EmbeddingsAnswer[] = [];
  let fallback: EmbeddingsAnswer = { kind: "ok" };
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();

  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    let payload: { model?: unknown; input?: unknown } = {};
    try {
      payload = JSON.parse(await readBody(request));
    } catch {
      // Recorded as it came; the scripted answer decides what happens.
    }
    const input =
      typeof payload.input === "string"
        ? [payload.input]
        : Array.isArray(payload.input)
          ? payload.input.map(String)
          : [];
    const seen: SeenRequest = {
      path: request.url ?? "",
      authorization: request.headers.authorization,
      model: payload.model,
      input,
      at: Date.now(),
      aborted: false,
    };
    requests.push(seen);
    response.on("close", () => {
      if (!response.writableFinished) seen.aborted = true;
    });
    const scripted = queue.shift() ?? fallback;
    switch (scripted.kind) {
      case "ok": {
        if (scripted.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
        const size = scripted.dimensions ?? dimensions;
        // Newest index first: the client must sort by index, not trust the order.
        const data = input
          .map((text, index) => ({ object: "embedding", index, embedding: embedText(text, size) }))
          .reverse();
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ object: "list", data, model: payload.model }));
        return;
      }
      case "status":
        response.writeHead(scripted.status, {
          "Content-Type": "application/json",
          ...scripted.headers,
        });
        response.end(scripted.body ?? JSON.stringify({ error: { message: "scripted failure" } }));
        return;
      case "drop":
        request.socket.destroy();
        return;
      case "stall":
        return;
      case "stall-body":
        response.writeHead(200, { "Content-Type": "application/json" });
        response.write('{"object":"list","data":[');
        return;
      case "raw":
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(scripted.body);
        return;
    }
  };

  const server = createServer((request, response) => {
    answer(request, response).catch(() => request.socket.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    dimensions,
    requests,
    script: (...answers) => queue.push(...answers),
    always: (answer) => {
      fallback = answer;
    },
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      fallback = { kind: "ok" };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
