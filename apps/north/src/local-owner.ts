import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Who may stop the local PostgreSQL under `.north/` (SPEC §10, decision 024).
 *
 * Every North process that uses the local database holds a lease: `.north/leases/<pid>`. These
 * include `bun run start`, a Claude Desktop stdio session and an operator command. The database
 * is stopped by the last process to let go, whichever process started it. So a stdio session
 * never stops it under a running `start`, and Ctrl-C on `start` stops it unless another North
 * process still uses it. A lease whose process is gone (killed, crashed) no longer counts. A
 * PostgreSQL found running with no live lease was left behind by a crash: the next process
 * adopts it with a warning, and stops it when it lets go.
 *
 * Opening and letting go run under `.north/lifecycle.lock`, so two processes never both decide
 * they are the last one, or both start PostgreSQL.
 */

const LOCK_WAIT_MS = 30_000;

const leasesDir = (home: string) => path.join(home, "leases");
const lockPath = (home: string) => path.join(home, "lifecycle.lock");
const postmasterPidPath = (home: string) => path.join(home, "pg", "postmaster.pid");

/** True if a process with this pid exists (EPERM: it exists, but belongs to another user). */
function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readPid(file: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(file, "utf8")).split("\n", 1)[0]?.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` holding `.north/lifecycle.lock`. A lock left by a process that is gone is taken
 * over; one held by a live process is waited for, at most LOCK_WAIT_MS.
 */
export async function withLifecycleLock<T>(home: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeFile(lockPath(home), `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = await readPid(lockPath(home));
      if (holder === undefined || !processAlive(holder)) {
        await rm(lockPath(home), { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `another North process (pid ${holder}) holds ${lockPath(home)}; try again when it has started or stopped`,
        );
      }
      await sleep(50);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockPath(home), { force: true });
  }
}

/** The pids of the live processes holding a lease, other than this one; dead leases are removed. */
export async function otherLeaseHolders(home: string): Promise<number[]> {
  let names: string[] = [];
  try {
    names = await readdir(leasesDir(home));
  } catch {
    return [];
  }
  const live: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    if (processAlive(pid)) live.push(pid);
    else await rm(path.join(leasesDir(home), name), { force: true });
  }
  return live;
}

export async function takeLease(home: string): Promise<void> {
  await mkdir(leasesDir(home), { recursive: true });
  await writeFile(
    path.join(leasesDir(home), String(process.pid)),
    `${process.argv.slice(2).join(" ")}\n`,
    {
      mode: 0o600,
    },
  );
}

export async function dropLease(home: string): Promise<void> {
  await rm(path.join(leasesDir(home), String(process.pid)), { force: true });
}

/** The running postmaster's pid from `pg/postmaster.pid`, if that process is alive. */
export async function runningPostmaster(home: string): Promise<number | undefined> {
  const pid = await readPid(postmasterPidPath(home));
  return pid !== undefined && processAlive(pid) ? pid : undefined;
}
