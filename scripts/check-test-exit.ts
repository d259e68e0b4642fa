/**
 * `bun run test:exit-codes`: proves that `bun run test` (and `bun run test:db`) turn red by exit
 * code — not by output — when a test fails, in each vitest project and with or without
 * `DATABASE_URL`. It writes throw-away test files where a developer would (under `test/`, as
 * `packages/db/src/*.integration.test.ts`, as `packages/agent-runtime/src/*.test.ts`), runs
 * only them, checks each exit code, and removes them. A passing fixture must exit 0, so the
 * check also fails if everything exits non-zero. Run by .ci/run before the suites.
 *
 * Env: CHECK_DATABASE_URL — also run the database cases against that server (.ci/run passes
 * the machine's PostgreSQL when one answers).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "@north/db";

const ROOT = path.resolve(import.meta.dirname, "..");
const tag = `zz-exit-check-${randomBytes(3).toString("hex")}`;

const BODIES = {
  pass: `import { expect, it } from "vitest";\nit("passes", () => { expect(1).toBe(1); });\n`,
  fail: `import { expect, it } from "vitest";\nit("fails", () => { expect(1).toBe(2); });\n`,
  failInBeforeAll: `import { beforeAll, expect, it } from "vitest";\nbeforeAll(() => { throw new Error("setup failed"); });\nit("never runs", () => { expect(1).toBe(1); });\n`,
} as const;

interface Case {
  name: string;
  file: string;
  body: keyof typeof BODIES;
  script?: "test" | "test:db";
  env?: Record<string, string>;
  expect: "zero" | "non-zero";
}

const where = {
  unit: `packages/agent-runtime/src/${tag}.test.ts`,
  integration: `packages/db/src/${tag}.integration.test.ts`,
  acceptance: `test/${tag}.test.ts`,
};

const deadDatabase = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
const cases: Case[] = [
  { name: "unit project, passing", file: where.unit, body: "pass", expect: "zero" },
  { name: "unit project, failing", file: where.unit, body: "fail", expect: "non-zero" },
  {
    name: "db project (*.integration.test.ts), passing",
    file: where.integration,
    body: "pass",
    expect: "zero",
  },
  {
    name: "db project (*.integration.test.ts), failing",
    file: where.integration,
    body: "fail",
    expect: "non-zero",
  },
  { name: "db project (test/), passing", file: where.acceptance, body: "pass", expect: "zero" },
  { name: "db project (test/), failing", file: where.acceptance, body: "fail", expect: "non-zero" },
  {
    name: "db project (test/), failing in beforeAll",
    file: where.acceptance,
    body: "failInBeforeAll",
    expect: "non-zero",
  },
  {
    name: "bun run test:db, failing",
    file: where.acceptance,
    body: "fail",
    script: "test:db",
    expect: "non-zero",
  },
  {
    name: "global setup failing (DATABASE_URL unreachable)",
    file: where.acceptance,
    body: "pass",
    env: { DATABASE_URL: deadDatabase },
    expect: "non-zero",
  },
];
const external = process.env.CHECK_DATABASE_URL;
if (external) {
  cases.push(
    {
      name: "with DATABASE_URL, passing",
      file: where.acceptance,
      body: "pass",
      env: { DATABASE_URL: external },
      expect: "zero",
    },
    {
      name: "with DATABASE_URL, failing (test/)",
      file: where.acceptance,
      body: "fail",
      env: { DATABASE_URL: external },
      expect: "non-zero",
    },
    {
      name: "with DATABASE_URL, failing (integration)",
      file: where.integration,
      body: "fail",
      env: { DATABASE_URL: external },
      script: "test:db",
      expect: "non-zero",
    },
  );
}

let failures = 0;
try {
  for (const c of cases) {
    const file = path.join(ROOT, c.file);
    writeFileSync(file, BODIES[c.body]);
    const env = { ...process.env, ...c.env };
    if (!c.env?.DATABASE_URL) delete env.DATABASE_URL;
    const result = spawnSync("bun", ["run", c.script ?? "test", c.file], {
      cwd: ROOT,
      env,
      encoding: "utf8",
      timeout: 180_000,
    });
    rmSync(file, { force: true });
    const code = result.status;
    const ok = c.expect === "zero" ? code === 0 : code !== 0 && code !== null;
    if (!ok) failures++;
    process.stdout.write(`${ok ? "ok  " : "FAIL"} ${c.name}: exit ${code}, expected ${c.expect}\n`);
    if (!ok) process.stdout.write(`${result.stdout}\n${result.stderr}\n`);
  }
} finally {
  for (const file of Object.values(where)) rmSync(path.join(ROOT, file), { force: true });
}
process.stdout.write(`exit-code check: ${cases.length - failures} passed, ${failures} failed\n`);
process.exit(failures === 0 ? 0 : 1);
