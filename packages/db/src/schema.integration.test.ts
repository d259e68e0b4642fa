import { execFile } from "node:child_process";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import drizzleConfig from "../../../drizzle.config.ts";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { MIGRATIONS_FOLDER } from "./migrate.ts";
import { PROVISIONED_TABLES } from "./provision.ts";
import * as schema from "./schema/index.ts";

/** Every North table: each must have RLS enabled and its policies intact. */
const TENANT_TABLES = PROVISIONED_TABLES;
const declared = TENANT_TABLES.flatMap((table) => {
  const config = getTableConfig(table);
  return config.policies.map((p) => ({
    table: config.name,
    name: p.name,
    using: p.using !== undefined,
    withCheck: p.withCheck !== undefined,
  }));
});

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

describe("policies as migrated", () => {
  it("provisions every table the schema declares", () => {
    const declaredTables = Object.values(schema)
      .filter((value) => is(value, PgTable))
      .map((table) => getTableConfig(table as PgTable).name)
      .sort();
    expect(TENANT_TABLES.map((t) => getTableConfig(t).name).sort()).toEqual(declaredTables);
  });

  it("enables row-level security on every tenant table", async () => {
    const rows = await db.owner.client`
      select relname, relrowsecurity, relforcerowsecurity from pg_class
      where relname in ${db.owner.client(TENANT_TABLES.map((t) => getTableConfig(t).name))}`;
    expect(rows).toHaveLength(TENANT_TABLES.length);
    for (const row of rows)
      expect(row).toMatchObject({ relrowsecurity: true, relforcerowsecurity: false });
  });

  it.each(declared)("keeps USING and WITH CHECK of policy $name", async (policy) => {
    const [row] = await db.owner.client`
      select qual, with_check, roles::text[] as roles from pg_policies
      where tablename = ${policy.table} and policyname = ${policy.name}`;
    expect(row).toBeDefined();
    expect(row?.roles).toEqual(["app_role"]);
    expect(row?.qual !== null).toBe(policy.using);
    expect(row?.with_check !== null).toBe(policy.withCheck);
    for (const clause of [row?.qual, row?.with_check].filter(Boolean)) {
      expect(clause).toContain("current_setting('north.");
    }
  });

  it("has every policy in the generated SQL with its clauses", async () => {
    const files = (await readdir(MIGRATIONS_FOLDER)).filter((f) => f.endsWith(".sql"));
    const text = (
      await Promise.all(files.map((f) => readFile(path.join(MIGRATIONS_FOLDER, f), "utf8")))
    ).join("\n");
    for (const policy of declared) {
      const statement = text
        .split("--> statement-breakpoint")
        .find((s) => s.includes(`"${policy.name}"`));
      expect(statement, policy.name).toBeDefined();
      expect(statement?.includes(" USING (")).toBe(policy.using);
      expect(statement?.includes(" WITH CHECK (")).toBe(policy.withCheck);
    }
  });
});

describe("migrations", () => {
  it("are in step with the Drizzle schema (drizzle-kit generate finds nothing to do)", async () => {
    const scratch = await mkdtemp(path.join(tmpdir(), "north-drizzle-check-"));
    try {
      await cp(MIGRATIONS_FOLDER, path.join(scratch, "drizzle"), { recursive: true });
      const root = path.resolve(MIGRATIONS_FOLDER, "..");
      const config = path.join(root, `.drizzle-check-${process.pid}.config.ts`);
      await writeFile(
        config,
        `export default { dialect: "postgresql", schema: ${JSON.stringify(drizzleConfig.schema)}, out: ${JSON.stringify(path.relative(root, path.join(scratch, "drizzle")))} };\n`,
      );
      try {
        const { stdout } = await promisify(execFile)(
          path.join(root, "node_modules/.bin/drizzle-kit"),
          ["generate", `--config=${config}`],
          { cwd: root },
        );
        expect(stdout).toContain("No schema changes");
      } finally {
        await rm(config, { force: true });
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
