import { type ChildProcess, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { freePort } from "@north/db";
import { Redis } from "ioredis";

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Starts it again on the same port after `stop`. */
  restart(): Promise<void>;
}

/**
 * A private `redis-server` on a random loopback port, keeping nothing on disk. Never the
 * machine's shared instance.
 */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  // With --save "" and --appendonly no, Redis writes nothing; --dir only needs to exist.
  const dir = tmpdir();
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
    const probe = new Redis({
      port,
      host: "127.0.0.1",
      lazyConnect: true,
      retryStrategy: () => null,
    });
    probe.on("error", () => {}); // refused until the server listens; the loop retries
    for (let attempt = 0; ; attempt++) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch (error) {
        if (attempt > 100) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const halt = async () => {
    const running = child;
    // Killed by a signal, a process has no exit code but a signal code: it is gone all the same.
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGKILL");
    });
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: halt,
    restart: launch,
  };
}
