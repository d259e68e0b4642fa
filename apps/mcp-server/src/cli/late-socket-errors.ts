import { describeError, type Logger } from "../logger.ts";

/**
 * Bun's `node:net` can emit a socket's `error` (`read ECONNRESET`) after the connection that
 * owned the socket stopped listening to it: seen once in a full CI run, when PostgreSQL was
 * stopped under load (decision 022). Nobody is left to handle such an error, and the connection
 * it belonged to has already failed its queries and closed; ending the process for it would turn
 * a database restart into an outage of the server. It is logged and dropped. Every other uncaught
 * exception still ends the process, with exit code 1, as it would without this handler.
 */
export function isLateSocketError(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException | undefined;
  return (
    (e?.code === "ECONNRESET" || e?.code === "EPIPE") &&
    (e.syscall === "read" || e.syscall === "write")
  );
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
  return handle;
}
