import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger };

export interface LoggerOptions {
  /** stdio mode must keep stdout for JSON-RPC: its logs go to stderr. */
  destination?: "stdout" | "stderr";
  level?: string;
  /** Any other destination (tests capture lines to prove no body is ever logged). */
  stream?: DestinationStream;
}

/**
 * pino JSON lines. North logs ids, tools, outcomes and latencies — never a question, answer,
 * memory body or token; the redaction paths are a second line of defence for headers.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { service: "north" },
      redact: {
        paths: ["authorization", "headers.authorization", "token", "*.token"],
        censor: "[redacted]",
      },
    },
    options.stream ??
      pino.destination({ dest: options.destination === "stderr" ? 2 : 1, sync: false }),
  );
}

export { describeError } from "@north/db";
