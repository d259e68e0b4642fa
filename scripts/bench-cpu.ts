/**
 * Where a benchmark round's CPU went, read from Linux's /proc: PostgreSQL's (the postmaster and
 * every process it started, exited ones included), the bench's own children (pgbench), the
 * machine's idle time and the time its hypervisor gave to other machines (steal); and what
 * PostgreSQL did in the background meanwhile (checkpoints, autovacuum), from its statistics.
 * The ratio of a round says how fast North is against its SQL; these say why: whether the
 * machine was saturated, and which process spent what per call.
 *
 * The /proc readings are only for a PostgreSQL on this machine (embedded, or a local
 * DATABASE_URL): elsewhere, or off Linux, they are `undefined` and the bench prints none.
 * PostgreSQL's background counters are read wherever it runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import type postgres from "postgres";

/** Clock ticks per second of /proc's times (`getconf CLK_TCK`; 100 on every Linux we run). */
const TICKS = 100;

/** Fields of /proc/<pid>/stat after the command (which may hold spaces and parentheses). */
function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** utime, stime, cutime, cstime (fields 14–17 of stat; here from index 11), in seconds. */
function times(fields: string[]) {
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return { own: (utime + stime) / TICKS, children: (cutime + cstime) / TICKS };
}

/**
 * CPU seconds of the postmaster of the backend `client` reaches, and of all its processes:
 * the live ones' own, and the exited ones' through the postmaster's waited-for children's time.
 */
export async function postgresCpu(
  client: postgres.Sql,
): Promise<(() => number | undefined) | undefined> {
  const [row] = await client<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const backend = row ? statFields(row.pid) : undefined;
  if (!backend) return undefined;
  const postmaster = Number(backend[1]);
  const read = () => {
    const before = statFields(postmaster);
    let live = 0;
    for (const entry of readdirSync("/proc")) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === postmaster) continue;
      const fields = statFields(pid);
      if (fields && Number(fields[1]) === postmaster) live += times(fields).own;
    }
    const after = statFields(postmaster);
    if (!before || !after) return undefined;
    const self = times(after);
    // A process reaped during the scan would count twice (live, then in the postmaster's total).
    const settled = times(before).children === self.children;
    return { settled, seconds: live + self.own + self.children };
  };
  return () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const reading = read();
      if (!reading) return undefined;
      if (reading.settled) return reading.seconds;
    }
    return undefined;
  };
}

/** CPU seconds of the bench's children that have exited and been waited for (pgbench). */
export function childrenCpu(): number | undefined {
  const fields = statFields("self");
  return fields ? times(fields).children : undefined;
}

/**
 * Seconds of idle CPU (idle and iowait, all cores) and of stolen CPU (time the hypervisor ran
 * something else while this machine's cores wanted to run) since boot, the context switches of
 * all its processes since boot, and the number of cores.
 */
export function machineTimes():
  | { idle: number; steal: number; switches: number; cores: number }
  | undefined {
  try {
    const lines = readFileSync("/proc/stat", "utf8").split("\n");
    const ticks = (lines[0] ?? "").split(/\s+/).slice(1).map(Number);
    const ctxt = lines.find((line) => line.startsWith("ctxt "));
    return {
      idle: ((ticks[3] ?? 0) + (ticks[4] ?? 0)) / TICKS,
      steal: (ticks[7] ?? 0) / TICKS,
      switches: Number(ctxt?.slice(5) ?? Number.NaN),
      cores: cpus().length,
    };
  } catch {
    return undefined;
  }
}

/** PostgreSQL's background work so far: checkpoints, and autovacuum and autoanalyze runs. */
interface Background {
  checkpoints: number;
  autovacuums: number;
}

/**
 * Reads PostgreSQL's counters of background work (`undefined` if they cannot be read): the
 * run-to-run swing of the ratio could come from a checkpoint or an autovacuum (after the save
 * rounds' inserts) landing in one side's rounds, whose PostgreSQL CPU it would be counted in.
 * Checkpoints performed are `num_done` of `pg_stat_checkpointer` from PostgreSQL 17, and the
 * timed and requested ones of `pg_stat_bgwriter` before.
 */
function backgroundCounters(client: postgres.Sql): () => Promise<Background | undefined> {
  let checkpointer: Promise<boolean> | undefined;
  const read = async (): Promise<Background | undefined> => {
    checkpointer ??= client<{ v: number }[]>`
      select current_setting('server_version_num')::int as v`.then(
      ([row]) => (row?.v ?? 0) >= 170000,
    );
    const checkpoints = (await checkpointer)
      ? client<{ n: number }[]>`select num_done::int as n from pg_stat_checkpointer`
      : client<{ n: number }[]>`
          select (checkpoints_timed + checkpoints_req)::int as n from pg_stat_bgwriter`;
    const [[c], [a]] = await Promise.all([
      checkpoints,
      client<{ n: number }[]>`
        select coalesce(sum(autovacuum_count + autoanalyze_count), 0)::int as n
        from pg_stat_all_tables`,
    ]);
    return c && a ? { checkpoints: c.n, autovacuums: a.n } : undefined;
  };
  return () => read().catch(() => undefined);
}

/** PostgreSQL's background processes, by `backend_type`, whose CPU a round reports. */
const BACKGROUND_TYPES = [
  "autovacuum worker",
  "checkpointer",
  "background writer",
  "walwriter",
  "io worker",
] as const;

/**
 * Watches PostgreSQL's background processes (on this machine) from now on: every 100 ms it lists
 * them and reads each one's CPU from /proc; the returned function stops watching and gives the
 * CPU seconds each kind spent meanwhile (a process's time before its first sighting is not
 * counted, so an autovacuum worker that started and ended between two looks is missed: a lower
 * bound). Their CPU is part of PostgreSQL's, and work that lands in one side's round (an
 * autovacuum, a checkpoint's writes) slows that side only.
 */
function watchBackground(client: postgres.Sql): () => Promise<Record<string, number>> {
  const seen = new Map<number, { type: string; first: number; last: number }>();
  let looking: Promise<void> | undefined;
  const look = () => {
    // One look at a time: on a saturated machine a look can take longer than the interval.
    if (looking) return;
    looking = client<{ pid: number; type: string }[]>`
      select pid, backend_type as type from pg_stat_activity
      where backend_type = any(${[...BACKGROUND_TYPES]})`
      .then((rows) => {
        for (const { pid, type } of rows) {
          const fields = statFields(pid);
          if (!fields) continue;
          const cpu = times(fields).own;
          const known = seen.get(pid);
          if (known) known.last = cpu;
          else seen.set(pid, { type, first: cpu, last: cpu });
        }
      })
      .catch(() => {})
      .finally(() => {
        looking = undefined;
      });
  };
  look();
  const timer = setInterval(look, 100);
  return async () => {
    clearInterval(timer);
    await looking;
    const spent: Record<string, number> = {};
    for (const { type, first, last } of seen.values())
      spent[type] = (spent[type] ?? 0) + last - first;
    return spent;
  };
}

/** PostgreSQL's background work, as a round measures it: its counters, and its processes' CPU. */
export interface PostgresBackground {
  counters: () => Promise<Background | undefined>;
  /** Starts watching; the returned function stops and gives the CPU seconds by kind. */
  watch: () => () => Promise<Record<string, number>>;
}

/** {@link PostgresBackground} of the PostgreSQL `client` reaches. */
export function postgresBackground(client: postgres.Sql): PostgresBackground {
  return { counters: backgroundCounters(client), watch: () => watchBackground(client) };
}

/** What of a round was not any one process's: the machine's shares and PostgreSQL's background. */
export interface AroundTheRound {
  /** Share of the machine's cores idle over the round, 0–1. */
  idle?: number;
  /** Share of the machine's cores' time the hypervisor gave to others over the round, 0–1. */
  steal?: number;
  /** Checkpoints PostgreSQL performed during the round. */
  checkpoints?: number;
  /** Autovacuum and autoanalyze runs PostgreSQL finished during the round. */
  autovacuums?: number;
  /** CPU seconds PostgreSQL's background processes spent during the round, by kind (at least). */
  backgroundCpu?: Record<string, number>;
  /** Context switches on the whole machine during the round. */
  switches?: number;
}

/** What one round spent: PostgreSQL's CPU, pgbench's, and what was around them. */
export interface RoundCpu {
  /** PostgreSQL's CPU seconds over the round. */
  postgres?: number;
  /** pgbench's CPU seconds (its process, once it exited). */
  pgbench?: number;
  around: AroundTheRound;
}

/** Starts measuring a round; the returned function ends it. */
export async function measureRound(
  pg: (() => number | undefined) | undefined,
  background?: PostgresBackground,
): Promise<() => Promise<RoundCpu>> {
  const background0 = await background?.counters();
  // Only where PostgreSQL's processes can be read here (the same condition as `pg`).
  const stopWatching = pg ? background?.watch() : undefined;
  const startedAt = performance.now();
  const pg0 = pg?.();
  const children0 = childrenCpu();
  const machine0 = machineTimes();
  return async (): Promise<RoundCpu> => {
    const seconds = (performance.now() - startedAt) / 1000;
    const pg1 = pg?.();
    const children1 = childrenCpu();
    const machine1 = machineTimes();
    const background1 = await background?.counters();
    const backgroundCpu = await stopWatching?.();
    const share = (of: "idle" | "steal") =>
      machine0 && machine1 && seconds > 0
        ? (machine1[of] - machine0[of]) / (seconds * machine1.cores)
        : undefined;
    return {
      postgres: pg0 !== undefined && pg1 !== undefined ? pg1 - pg0 : undefined,
      pgbench:
        children0 !== undefined && children1 !== undefined ? children1 - children0 : undefined,
      around: {
        idle: share("idle"),
        steal: share("steal"),
        checkpoints:
          background0 && background1
            ? background1.checkpoints - background0.checkpoints
            : undefined,
        autovacuums:
          background0 && background1
            ? background1.autovacuums - background0.autovacuums
            : undefined,
        backgroundCpu,
        switches:
          machine0 && machine1 && Number.isFinite(machine1.switches - machine0.switches)
            ? machine1.switches - machine0.switches
            : undefined,
      },
    };
  };
}
