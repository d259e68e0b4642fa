import type { ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { errorPage } from "./pages/error.ts";

/** The slice of a pino logger the console needs; the composition root passes the server's. */
export interface ConsoleLogger {
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * What of an error may be logged: class names, SQLSTATEs, constraint and routine names along
 * the cause chain. Never a message or a stack: Drizzle's carry the query and its parameters
 * (subject names, memory bodies), and PostgreSQL's can quote values.
 */
export function errorFields(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { errorType: typeof error };
  const fields = error as Error & { code?: unknown; constraint_name?: unknown; routine?: unknown };
  const cause = (error as { cause?: unknown }).cause;
  return {
    errorType: error.name,
    code: typeof fields.code === "string" ? fields.code : undefined,
    constraint: typeof fields.constraint_name === "string" ? fields.constraint_name : undefined,
    routine: typeof fields.routine === "string" ? fields.routine : undefined,
    cause: cause !== undefined && depth < 3 ? errorFields(cause, depth + 1) : undefined,
  };
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
      { requestId, method: c.req.method, path: c.req.path, ...errorFields(error) },
      "console request failed",
    );
    return c.html(errorPage(requestId), 500);
  };
}
