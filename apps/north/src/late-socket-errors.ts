import { describeError, type Logger } from "@north/mcp-server";

/**
 * Bun's `node:net` can emit a socket's `error` (`read ECONNRESET`) after the connection that
 * owned the socket stopped listening to it: seen once in a full CI run, when PostgreSQL was
 * stopped under load (decision 022). Nobody is left to handle such an error, and the connection
 * it belonged to has already failed its queries and closed; ending the process for it would turn
 * a database restart into an outage of the server. It is logged and dropped. postgres.js does the
 * same as a rejection (`write CONNECTION_CLOSED`) of a query nobody awaits any more, once its
 * request has been refused as NORTH_UNAVAILABLE: seen once in a full CI run of the same fault
 * test, so unhandled rejections go through the same rule. Every other uncaught exception or
 * unhandled rejection still ends the process, with exit code 1, as it would without this handler.
 */
export function isLateSocketError(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException | undefined;
  const socket =
    (e?.code === "ECONNRESET" || e?.code === "EPIPE") &&
    (e.syscall === "read" || e.syscall === "write");
  // postgres.js's own form: code and errno both CONNECTION_CLOSED, no syscall.
  const postgres = e?.code === "CONNECTION_CLOSED" && String(e.errno) === "CONNECTION_CLOSED";
  return socket || postgres;
}

export function survivingLateSocketErrors(
  logger: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): (error: unknown) => void {
  const handle = (error: unknown) => {
    if (isLateSocketError(error)) {
      logger.warn(
        describeError(error),
        "a socket error arrived after its connection closed; ignored",
      );
      return;
    }
    logger.fatal(describeError(error), "uncaught exception");
    logger.flush();
    exit(1);
  };
  process.on("uncaughtException", handle);
  process.on("unhandledRejection", handle);
  return handle;
}
