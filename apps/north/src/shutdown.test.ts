import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { capturingLogger } from "../../../test/support/logs.ts";
import { onShutdown, type ShutdownStep, SIGNAL_ECHO_MS } from "./shutdown.ts";

function harness(steps: ShutdownStep[]) {
  const signals = new EventEmitter();
  const { logger, logs: lines } = capturingLogger("info");
  const exits: { code: number; at: number }[] = [];
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => {
    exited = resolve;
  });
  const stop = onShutdown(logger, steps, {
    signals,
    exit: (code) => {
      exits.push({ code, at: Date.now() });
      exited(code);
    },
  });
  return { signals, lines, exits, exit, stop };
}

const never = () => new Promise<void>(() => {});

describe("onShutdown", () => {
  it("goes on without a step that never finishes, and still exits 0", async () => {
    const ran: string[] = [];
    const { signals, exit, lines } = harness([
      { name: "stuck", run: never, timeoutMs: 50 },
      { name: "pool", run: async () => void ran.push("pool"), timeoutMs: 50 },
    ]);
    const started = Date.now();
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(ran).toEqual(["pool"]);
    expect(lines.join("")).toMatch(/"step":"stuck"/);
  });

  it("goes on after a step that fails", async () => {
    const ran: string[] = [];
    const { signals, exit } = harness([
      { name: "broken", run: () => Promise.reject(new Error("boom")), timeoutMs: 1_000 },
      { name: "pool", run: async () => void ran.push("pool"), timeoutMs: 1_000 },
    ]);
    signals.emit("SIGINT");
    expect(await exit).toBe(0);
    expect(ran).toEqual(["pool"]);
  });

  it("exits at once on a second signal, with the shell's code for it", async () => {
    const { signals, exits } = harness([{ name: "drain", run: never, timeoutMs: 60_000 }]);
    signals.emit("SIGINT");
    // The same Ctrl-C forwarded by `bun run` is not a second signal.
    signals.emit("SIGINT");
    await new Promise((r) => setTimeout(r, SIGNAL_ECHO_MS + 50));
    expect(exits).toEqual([]);
    signals.emit("SIGTERM");
    expect(exits.map((e) => e.code)).toEqual([143]);
  });

  it("runs the steps once when stdio's end asks for the stop twice", async () => {
    let runs = 0;
    const { exit, stop, exits } = harness([
      { name: "pool", run: async () => void runs++, timeoutMs: 1_000 },
    ]);
    void stop("stdio closed");
    void stop("stdio closed");
    expect(await exit).toBe(0);
    expect(runs).toBe(1);
    expect(exits.map((e) => e.code)).toEqual([0]);
  });
});
