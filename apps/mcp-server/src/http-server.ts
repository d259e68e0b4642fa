import { serve } from "@hono/node-server";

export interface HttpServerOptions {
  port: number;
  hostname: string;
}

export interface HttpServerHandle {
  port: number;
  hostname: string;
  close(): Promise<void>;
}

type FetchHandler = (request: Request) => Response | Promise<Response>;

interface BunRuntime {
  serve(options: { fetch: FetchHandler; port: number; hostname: string; idleTimeout: number }): {
    port: number;
    stop(closeActive?: boolean): Promise<void> | void;
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
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun) {
    const server = bun.serve({
      fetch,
      port: options.port,
      hostname: options.hostname,
      idleTimeout: BUN_IDLE_TIMEOUT_S,
    });
    return {
      port: server.port,
      hostname: options.hostname,
      close: async () => {
        await server.stop(true);
      },
    };
  }
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port: options.port, hostname: options.hostname }, (info) => {
      resolve({
        port: info.port,
        hostname: options.hostname,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.once("error", reject);
  });
}
