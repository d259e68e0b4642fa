import { serve } from "@hono/node-server";

export interface HttpServerOptions {
  port: number;
  hostname: string;
}

export interface HttpServerHandle {
  port: number;
  hostname: string;
  /** Requests being answered right now. */
  inFlight(): number;
  /**
   * Stops accepting connections (a request that still arrives on an open one gets 503), waits
   * up to `drainMs` (default 0) for the requests in flight to be answered, then closes every
   * connection. Requests still in flight afterwards (`inFlight()`) were cut off.
   */
  close(drainMs?: number): Promise<void>;
}

/**
 * The app's fetch: `env` is what the runtime passes beside the request — `@hono/node-server`'s
 * bindings or Bun's server — which is where the connection's address is read from.
 */
type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

interface BunRuntime {
  serve(options: { fetch: FetchHandler; port: number; hostname: string; idleTimeout: number }): {
    port: number;
    stop(closeActive?: boolean): Promise<void> | void;
  };
}

/** After the drain under Node, how long responses already produced may take to be written. */
const WRITE_GRACE_MS = 1_000;

/** Answer to a request that arrives while the server drains: try again (another replica). */
const shuttingDown = () =>
  new Response(JSON.stringify({ error: "The server is shutting down; try again shortly." }), {
    status: 503,
    headers: { "Content-Type": "application/json", "Retry-After": "1", Connection: "close" },
  });

/**
 * Counts the requests in flight, and refuses new ones once draining starts. A response counts
 * until its handler returns it: North's answers (JSON, HTML) are complete bodies, not streams.
 */
function drainable(fetch: FetchHandler) {
  let inFlight = 0;
  let draining = false;
  const idle = new Set<() => void>();
  const handler: FetchHandler = async (request, env) => {
    if (draining) return shuttingDown();
    inFlight += 1;
    try {
      return await fetch(request, env);
    } finally {
      inFlight -= 1;
      if (inFlight === 0) for (const resolve of idle) resolve();
    }
  };
  return {
    handler,
    inFlight: () => inFlight,
    /** Refuses new requests from now on; resolves when none is in flight or after `ms`. */
    async drain(ms: number): Promise<void> {
      draining = true;
      if (inFlight === 0 || ms <= 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done: () => void = () => {};
      await new Promise<void>((resolve) => {
        done = resolve;
        idle.add(done);
        timer = setTimeout(resolve, ms);
      });
      idle.delete(done);
      clearTimeout(timer);
    },
  };
}

/**
 * Longest time Bun keeps an idle request open, in seconds (Bun's maximum). Its default of 10 s
 * silently cuts any tool call that takes longer.
 */
export const BUN_IDLE_TIMEOUT_S = 255;

/** Serves a fetch handler with `Bun.serve` under Bun and `@hono/node-server` under Node. */
export async function startHttpServer(
  fetch: FetchHandler,
  options: HttpServerOptions,
): Promise<HttpServerHandle> {
  const gate = drainable(fetch);
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun) {
    const server = bun.serve({
      fetch: gate.handler,
      port: options.port,
      hostname: options.hostname,
      idleTimeout: BUN_IDLE_TIMEOUT_S,
    });
    return {
      port: server.port,
      hostname: options.hostname,
      inFlight: gate.inFlight,
      async close(drainMs = 0) {
        // stop(false) closes the listener and lets open requests finish; it is not awaited, as
        // it only resolves once every connection is gone. stop(true) then closes the rest.
        void Promise.resolve(server.stop(false)).catch(() => {});
        await gate.drain(drainMs);
        await server.stop(true);
      },
    };
  }
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: gate.handler, port: options.port, hostname: options.hostname },
      (info) => {
        const connections = server as {
          closeIdleConnections?: () => void;
          closeAllConnections?: () => void;
        };
        resolve({
          port: info.port,
          hostname: options.hostname,
          inFlight: gate.inFlight,
          async close(drainMs = 0) {
            let ended = false;
            const closed = new Promise<void>((done) => server.close(() => done())).then(() => {
              ended = true;
            });
            connections.closeIdleConnections?.();
            await gate.drain(drainMs);
            // A handler has returned, but node:http may still be writing its response: close
            // connections as they fall idle for a moment before cutting the rest.
            const grace = Date.now() + WRITE_GRACE_MS;
            while (!ended && Date.now() < grace) {
              connections.closeIdleConnections?.();
              await new Promise((r) => setTimeout(r, 20));
            }
            connections.closeAllConnections?.();
            await closed;
          },
        });
      },
    );
    server.once("error", reject);
  });
}
