import { Writable } from "node:stream";
import { createLogger, type Logger } from "@north/mcp-server";

/** The server's real logger, writing into an array a test can read. */
export function capturingLogger(level = "info"): { logger: Logger; logs: string[] } {
  const logs: string[] = [];
  const logger = createLogger({
    level,
    stream: new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    }),
  });
  return { logger, logs };
}
