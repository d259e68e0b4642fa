import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { createInterface } from "node:readline";
import { migrateDatabase, provisionDatabase } from "@north/db";
import postgres from "postgres";
import { databaseUrl, loginUrl } from "./pg-urls.ts";

const PROCESS = path.join(import.meta.dirname, "restartable-postgres-process.ts");

export interface RestartablePostgres {
  /** Superuser URL of the database North is installed in (what `DATABASE_URL` would be). */
  ownerUrl: string;
  /** The app login role on that database (what `DATABASE_APP_URL` is for `north serve`). */
  appUrl: string;
  /** Fast shutdown (SIGINT to the postmaster), as a restart or a crash of the host would. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  close(): Promise<void>;
}

/**
 * A PostgreSQL of this suite's own, migrated and provisioned, that the suite may stop and start
 * (the run's shared server must never be stopped). It runs in a child process under Bun
 * (restartable-postgres-process.ts), which removes it when this process goes away.
 */
export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const child = spawn("bun", [PROCESS], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const replies = replyQueue(child);
  const hello = await replies.next(120_000);
  const serverUrl = hello.url as string;
  const command = async (line: "stop" | "start", expected: string) => {
    child.stdin?.write(`${line}\n`);
    const reply = await replies.next(60_000);
    if (!reply[expected]) throw new Error(`PostgreSQL ${line} failed: ${JSON.stringify(reply)}`);
  };
  const close = async () => {
    if (child.exitCode === null) child.stdin?.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
  };
  try {
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe("CREATE DATABASE north_faults");
    await admin.end({ timeout: 5 });
    const ownerUrl = databaseUrl(serverUrl, "north_faults");
    const loginUser = "north_app_faults";
    const loginPassword = randomBytes(12).toString("hex");
    await migrateDatabase(ownerUrl);
    await provisionDatabase(ownerUrl, { loginUser, loginPassword });
    return {
      ownerUrl,
      appUrl: loginUrl(ownerUrl, loginUser, loginPassword),
      stop: () => command("stop", "stopped"),
      start: () => command("start", "started"),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The child's JSON lines, one at a time, in order. */
function replyQueue(child: ChildProcess) {
  const lines: Record<string, unknown>[] = [];
  const waiting: Array<(line: Record<string, unknown>) => void> = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (text) => {
    if (!text.startsWith("{")) return;
    const line = JSON.parse(text) as Record<string, unknown>;
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else lines.push(line);
  });
  return {
    next(timeoutMs: number): Promise<Record<string, unknown>> {
      const ready = lines.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("PostgreSQL did not answer")), timeoutMs);
        const onExit = () => reject(new Error(`PostgreSQL process exited (${child.exitCode})`));
        child.once("exit", onExit);
        waiting.push((line) => {
          clearTimeout(timer);
          child.off("exit", onExit);
          resolve(line);
        });
      });
    },
  };
}
