/**
 * The first step of `bun run test` (SPEC §10): the Debian packages the suites start besides what
 * npm brings — `redis-server` for the limiter suites, `chromium` for the console, `pgbouncer` for
 * the transaction-pooler suites. Missing ones are installed when this run can (root, with
 * apt-get); else it stops at once with one line naming the command to run, so no suite fails
 * halfway on a missing binary. The README's prerequisites line names exactly this list.
 */
import { type StdioOptions, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

interface Prerequisite {
  /** The Debian package. */
  debian: string;
  /** Where the suites look for it: an absolute path, or a name found on PATH. */
  binary: string;
}

export const PREREQUISITES: readonly Prerequisite[] = [
  { debian: "redis-server", binary: "redis-server" },
  { debian: "chromium", binary: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" },
  { debian: "pgbouncer", binary: process.env.PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer" },
];

const executable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const found = ({ binary }: Prerequisite) =>
  path.isAbsolute(binary)
    ? executable(binary)
    : (process.env.PATH ?? "")
        .split(path.delimiter)
        .some((dir) => executable(path.join(dir, binary)));

const missing = () => PREREQUISITES.filter((p) => !found(p)).map((p) => p.debian);

const absent = missing();
if (absent.length > 0) {
  const install = `apt-get install -y ${absent.join(" ")}`;
  const canInstall = process.getuid?.() === 0 && executable("/usr/bin/apt-get");
  if (!canInstall) {
    console.error(
      `bun run test needs ${absent.join(", ")}: run sudo apt-get update && sudo ${install}`,
    );
    process.exit(1);
  }
  console.error(`bun run test: installing ${absent.join(", ")} (${install})`);
  const quiet: { stdio: StdioOptions } = { stdio: ["ignore", "ignore", "inherit"] };
  const updated = spawnSync("apt-get", ["update", "-qq"], quiet);
  const installed =
    updated.status === 0 &&
    spawnSync("apt-get", ["install", "-y", "-qq", ...absent], {
      ...quiet,
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    }).status === 0;
  const still = missing();
  if (!installed || still.length > 0) {
    console.error(
      `bun run test could not install ${still.join(", ") || absent.join(", ")}: run ${install}`,
    );
    process.exit(1);
  }
}
