import { describeError } from "@north/db";
import type { ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { errorPage } from "./pages/error.ts";

/** The slice of a pino logger the console needs; the composition root passes the server's. */
export interface ConsoleLogger {
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * The console's one error handler: an HTTP failure keeps its status; anything else is logged
 * once (request id, method, path — never the query string or a body) and the browser gets a
 * page with the request id and nothing else.
 */
export function handleConsoleError<E extends { Variables: { requestId: string } }>(
  logger: ConsoleLogger,
): ErrorHandler<E> {
  return (error, c) => {
    const requestId = c.get("requestId");
    if (error instanceof HTTPException && error.status < 500) {
      return c.html(errorPage(requestId), error.status);
    }
    logger.error(
      { requestId, method: c.req.method, path: c.req.path, ...describeError(error) },
      "console request failed",
    );
    return c.html(errorPage(requestId), 500);
  };
}
