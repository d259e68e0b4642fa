import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { LEGACY_QUESTION_LABEL, QUESTION_BANK, RETIRED_QUESTION_IDS } from "@north/agent-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dumpSecurityState } from "../../../test/support/catalog.ts";
import {
  createTestDatabase,
  installFresh,
  migrateBefore,
  type TestDatabase,
} from "../../../test/support/database.ts";
import { createWorkspace, createWorkspaceOnOldSchema } from "../../../test/support/fixtures.ts";
import { readAuditForAdmin, recordAudit } from "./audit.ts";
import { MIGRATIONS_FOLDER, migrateDatabase } from "./migrate.ts";
import { provisionDatabase } from "./provision.ts";
import { withTenant } from "./tenant.ts";
import { readProfile, readProfilesForAdmin } from "./working-profile.ts";

const opened: TestDatabase[] = [];
const fresh = async (from: "template" | "empty" = "empty") => {
  const db = await createTestDatabase({ from });
  opened.push(db);
  return db;
};
afterAll(async () => {
  await Promise.all(opened.map((db) => db.drop()));
});

const loginPassword = () => process.env.DB_APP_LOGIN_PASSWORD ?? "north-test-login";

describe("the app login role", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await fresh("template");
  });

  it("is not superuser, has no BYPASSRLS, and is a member of app_role only", async () => {
    const [role] = await db.owner.client`
      select rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin
      from pg_roles where rolname = ${db.loginUser}`;
    expect(role).toEqual({
      rolsuper: false,
      rolbypassrls: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolcanlogin: true,
    });
    const groups = await db.owner.client`
      select r.rolname from pg_auth_members am
      join pg_roles r on r.oid = am.roleid join pg_roles m on m.oid = am.member
      where m.rolname = ${db.loginUser}`;
    expect(groups.map((g) => g.rolname)).toEqual(["app_role"]);
  });

  it("owns nothing in the database", async () => {
    const [owned] = await db.owner.client`
      select
        (select count(*) from pg_class where relowner = r.oid)::int as relations,
        (select count(*) from pg_proc where proowner = r.oid)::int as functions,
        (select count(*) from pg_namespace where nspowner = r.oid)::int as schemas,
        (select count(*) from pg_type t where t.typowner = r.oid)::int as types,
        (select count(*) from pg_database where datdba = r.oid)::int as databases
      from pg_roles r where r.rolname = ${db.loginUser}`;
    expect(owned).toEqual({ relations: 0, functions: 0, schemas: 0, types: 0, databases: 0 });
  });

  it("cannot SET ROLE forma", async () => {
    await expect(db.app.client.begin((sql) => sql`set local role forma`)).rejects.toMatchObject({
      code: "42501",
    });
  });

  it("may only insert into the audit table", async () => {
    const ws = await createWorkspace(db.owner.db);
    for (const statement of [
      "update audit_events set outcome = 'error'",
      "delete from audit_events",
      "select * from audit_events",
      "truncate audit_events",
    ]) {
      await expect(
        withTenant(db.app.db, ws.member, (tx) => tx.execute(statement)),
      ).rejects.toMatchObject({ cause: expect.objectContaining({ code: "42501" }) });
    }
  });
});

describe("working_profile_answers_for_admin", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await fresh("template");
  });

  it("is SECURITY DEFINER, owned by forma, with a pinned search_path", async () => {
    const [fn] = await db.owner.client`
      select prosecdef, proowner::regrole::text as owner, proconfig
      from pg_proc where proname = 'working_profile_answers_for_admin'`;
    expect(fn).toEqual({
      prosecdef: true,
      owner: "forma",
      proconfig: ["search_path=pg_catalog, pg_temp"],
    });
  });

  it.each([
    "working_profile_answers_for_admin",
    "resolve_api_token",
    "audit_events_for_admin",
    "resolve_admin_session",
  ])("%s grants EXECUTE to app_role and not to PUBLIC, and is owned by forma", async (name) => {
    const [acl] = await db.owner.client`
        select has_function_privilege('app_role', p.oid, 'EXECUTE') as app,
               exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0) as public,
               p.proowner::regrole::text as owner, p.prosecdef, p.proconfig
        from pg_proc p where proname = ${name}`;
    expect(acl).toEqual({
      app: true,
      public: false,
      owner: "forma",
      prosecdef: true,
      proconfig: ["search_path=pg_catalog, pg_temp"],
    });
  });

  it("shows a manager every member of their organization and nothing of another (case 19)", async () => {
    const a = await createWorkspace(db.owner.db, "A");
    const b = await createWorkspace(db.owner.db, "B");
    for (const owner of [a.member, a.manager, b.member]) {
      await db.owner.client`
        insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
        values (${owner.organizationId}, ${owner.userId}, 'role-team', 'Team?', ${owner.userId})`;
    }
    const result = await withTenant(db.app.db, a.manager, (tx) =>
      readProfilesForAdmin(tx, { organizationId: a.organizationId, requesterId: a.manager.userId }),
    );
    expect(result.ok).toBe(true);
    const owners = result.ok ? result.entries.map((e) => e.ownerUserId).sort() : [];
    expect(owners).toEqual([a.member.userId, a.manager.userId].sort());
  });

  it("refuses an ordinary member, and the transaction carries on", async () => {
    const a = await createWorkspace(db.owner.db);
    const after = await withTenant(db.app.db, a.member, async (tx) => {
      const refused = await readProfilesForAdmin(tx, {
        organizationId: a.organizationId,
        requesterId: a.member.userId,
      });
      expect(refused).toEqual({ ok: false });
      return readProfile(tx, { owner: a.member });
    });
    expect(after).toEqual([]);
  });

  it("gives a manager the organization's audit events and refuses an ordinary member", async () => {
    const a = await createWorkspace(db.owner.db);
    await withTenant(db.app.db, a.member, (tx) =>
      recordAudit(tx, { tool: "north__working_profile", outcome: "read" }),
    );
    const forManager = await withTenant(db.app.db, a.manager, (tx) =>
      readAuditForAdmin(tx, { organizationId: a.organizationId, requesterId: a.manager.userId }),
    );
    expect(forManager.ok && forManager.events.map((e) => [e.tool, e.actorEmail])).toEqual([
      ["north__working_profile", expect.stringContaining("member")],
    ]);
    const forMember = await withTenant(db.app.db, a.member, (tx) =>
      readAuditForAdmin(tx, { organizationId: a.organizationId, requesterId: a.member.userId }),
    );
    expect(forMember).toEqual({ ok: false });
  });

  it("refuses a requester who is not the transaction's tenant", async () => {
    const a = await createWorkspace(db.owner.db);
    const result = await withTenant(db.app.db, a.member, (tx) =>
      readProfilesForAdmin(tx, { organizationId: a.organizationId, requesterId: a.manager.userId }),
    );
    expect(result).toEqual({ ok: false });
  });

  it("ignores temporary tables that shadow the names it uses", async () => {
    const a = await createWorkspace(db.owner.db);
    const attempt = await db.app.client.begin(async (sql) => {
      await sql`select set_config('north.organization_id', ${a.organizationId}, true),
                       set_config('north.user_id', ${a.member.userId}, true)`;
      await sql`create temp table members (organization_id uuid, user_id uuid, role text, email text) on commit drop`;
      await sql`insert into members values (${a.organizationId}, ${a.member.userId}, 'manager', 'x')`;
      // Readable by the function's owner, so only its qualified names keep it out.
      await sql`grant select on members to public`;
      return sql
        .savepoint(
          (sp) =>
            sp`select * from working_profile_answers_for_admin(${a.organizationId}, ${a.member.userId})`,
        )
        .then(
          () => "admitted",
          (error: { code?: string }) => error.code,
        );
    });
    expect(attempt).toBe("42501");
  });
});

describe("legacy rows and size (case 15)", () => {
  it("reads null question text with bank wording or the legacy label, and 101 rows in full", async () => {
    const db = await fresh("template");
    const ws = await createWorkspace(db.owner.db);
    const bankId = QUESTION_BANK[1]?.id ?? "";
    const retired = RETIRED_QUESTION_IDS[0] ?? "";
    await db.owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, answer)
      values (${ws.organizationId}, ${ws.member.userId}, ${bankId}, 'legacy bank'),
             (${ws.organizationId}, ${ws.member.userId}, ${retired}, 'legacy retired')`;
    await db.owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
      select ${ws.organizationId}, ${ws.member.userId}, 'bulk-' || g, 'Bulk ' || g || '?', 'answer ' || g
      from generate_series(1, 99) g`;

    const own = await withTenant(db.app.db, ws.member, (tx) =>
      readProfile(tx, { owner: ws.member, locale: "fr" }),
    );
    expect(own).toHaveLength(101);
    expect(own.find((e) => e.questionId === bankId)).toMatchObject({
      question: QUESTION_BANK[1]?.wording.fr,
      questionSource: "bank",
    });
    expect(own.find((e) => e.questionId === retired)).toMatchObject({
      question: LEGACY_QUESTION_LABEL,
      questionSource: "legacy_label",
    });

    const admin = await withTenant(db.app.db, ws.manager, (tx) =>
      readProfilesForAdmin(tx, {
        organizationId: ws.organizationId,
        requesterId: ws.manager.userId,
      }),
    );
    expect(admin.ok && admin.entries.length).toBe(101);
    expect(admin.ok && admin.entries.find((e) => e.questionId === retired)?.question).toBe(
      LEGACY_QUESTION_LABEL,
    );
  });
});

describe("provisioning (case 18)", () => {
  it("creates the function on a fresh install, and a rerun changes nothing", async () => {
    const db = await fresh();
    await installFresh(db);
    const first = await dumpSecurityState(db.owner.client, db.loginUser);
    expect(first.functions.map((f) => f.signature)).toContain(
      "working_profile_answers_for_admin(uuid,uuid)",
    );
    await provisionDatabase(db.ownerUrl, {
      loginUser: db.loginUser,
      loginPassword: loginPassword(),
      maintenanceLoginUser: db.maintenanceLoginUser,
    });
    expect(await dumpSecurityState(db.owner.client, db.loginUser)).toEqual(first);
  });

  it("lets four concurrent runs all succeed with the same result", async () => {
    const db = await fresh();
    await migrateDatabase(db.ownerUrl);
    // A login role that does not exist yet, so the runs reach CREATE ROLE at the same time.
    const loginUser = `north_app_${randomBytes(4).toString("hex")}`;
    const options = {
      loginUser,
      loginPassword: loginPassword(),
      maintenanceLoginUser: db.maintenanceLoginUser,
    };
    try {
      await Promise.all(Array.from({ length: 4 }, () => provisionDatabase(db.ownerUrl, options)));
      const state = await dumpSecurityState(db.owner.client, loginUser);
      await provisionDatabase(db.ownerUrl, options);
      expect(await dumpSecurityState(db.owner.client, loginUser)).toEqual(state);
    } finally {
      await db.owner.client.unsafe(`DROP ROLE IF EXISTS ${loginUser}`);
    }
  });

  it("lets two concurrent migrations both succeed and apply each migration once", async () => {
    const db = await fresh();
    await Promise.all([migrateDatabase(db.ownerUrl), migrateDatabase(db.ownerUrl)]);
    const journal = JSON.parse(
      await readFile(path.join(MIGRATIONS_FOLDER, "meta/_journal.json"), "utf8"),
    );
    const [applied] = await db.owner
      .client`select count(*)::int as n from drizzle.__drizzle_migrations`;
    expect(applied?.n).toBe(journal.entries.length);
  });

  describe("upgrading a database from before question text was recorded", () => {
    let db: TestDatabase;
    let ws: Awaited<ReturnType<typeof createWorkspace>>;

    beforeAll(async () => {
      db = await fresh();
      // Everything before question text was recorded: an older release's schema.
      await migrateBefore(db, "question_text");

      // The previous release's admin function: other shape, superuser-owned, PUBLIC may run it.
      await db.owner.client.unsafe(`
        CREATE FUNCTION public.working_profile_answers_for_admin(p_organization_id uuid, p_requester_id uuid)
        RETURNS TABLE (owner_id uuid, question_id text, answer text, version integer)
        LANGUAGE sql SECURITY DEFINER
        AS $$ SELECT a.owner_id, a.question_id, a.answer, a.version
              FROM public.working_profile_answers a WHERE a.organization_id = p_organization_id $$`);
      ws = await createWorkspaceOnOldSchema(db.owner.client);
      await db.owner.client`
        insert into working_profile_answers (organization_id, owner_id, question_id, answer)
        values (${ws.organizationId}, ${ws.member.userId}, 'preferred-font', 'Garamond')`;
    });

    it("refuses to drop a function something depends on, and changes nothing", async () => {
      await db.owner.client.unsafe(
        "CREATE VIEW admin_probe AS SELECT * FROM public.working_profile_answers_for_admin(null, null)",
      );
      // Provisioning is under test, not the migrations (some of which create functions): migrate
      // first, so the failed install below has only provisioning left to run.
      await migrateDatabase(db.ownerUrl);
      const before = await dumpSecurityState(db.owner.client, db.loginUser);
      await expect(installFresh(db).then(() => "provisioned")).rejects.toMatchObject({
        code: "2BP01",
      });
      const [view] = await db.owner
        .client`select count(*)::int as n from pg_views where viewname = 'admin_probe'`;
      expect(view?.n).toBe(1);
      const after = await dumpSecurityState(db.owner.client, db.loginUser);
      expect(after.functions).toEqual(before.functions);
      await db.owner.client.unsafe("DROP VIEW admin_probe");
    });

    it("replaces the old definition with owner, search_path, revoke and grant restored", async () => {
      await installFresh(db);
      const [fn] = await db.owner.client`
        select proowner::regrole::text as owner, proconfig, prosecdef,
               has_function_privilege('app_role', p.oid, 'EXECUTE') as app,
               exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0) as public,
               pg_get_function_result(p.oid) as result
        from pg_proc p where proname = 'working_profile_answers_for_admin'`;
      expect(fn).toMatchObject({
        owner: "forma",
        proconfig: ["search_path=pg_catalog, pg_temp"],
        prosecdef: true,
        app: true,
        public: false,
      });
      expect(fn?.result).toContain("owner_user_id uuid");
      expect(fn?.result).toContain("question_text text");
    });

    it("still answers an old explicit-column read of the admin function after the upgrade", async () => {
      await installFresh(db); // the upgrade itself (a no-op after the test before), so this runs alone
      const rows = await db.app.client.begin(async (sql) => {
        await sql`select set_config('north.organization_id', ${ws.organizationId}, true),
                         set_config('north.user_id', ${ws.manager.userId}, true)`;
        return sql`select question_id, answer, version
                   from public.working_profile_answers_for_admin(${ws.organizationId}, ${ws.manager.userId})`;
      });
      expect(rows.map((r) => ({ ...r }))).toContainEqual({
        question_id: "preferred-font",
        answer: "Garamond",
        version: 1,
      });
    });

    it("carries old rows across and keeps accepting old-shape inserts, read with the fallback", async () => {
      // Upgrades here too (a no-op after the case above), so the case also runs on its own.
      await installFresh(db);
      await db.app.client.begin(async (sql) => {
        await sql`select set_config('north.organization_id', ${ws.organizationId}, true),
                         set_config('north.user_id', ${ws.member.userId}, true)`;
        // The source system's legacy writer: no question text, no version.
        await sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, answer)
                  values (${ws.organizationId}, ${ws.member.userId}, 'old-writer', 'written without question text')`;
      });
      const rows = await withTenant(db.app.db, ws.member, (tx) =>
        readProfile(tx, { owner: ws.member }),
      );
      expect(rows.map((r) => [r.questionId, r.question, r.questionSource])).toEqual([
        ["preferred-font", LEGACY_QUESTION_LABEL, "legacy_label"],
        ["old-writer", LEGACY_QUESTION_LABEL, "legacy_label"],
      ]);
      const admin = await withTenant(db.app.db, ws.manager, (tx) =>
        readProfilesForAdmin(tx, {
          organizationId: ws.organizationId,
          requesterId: ws.manager.userId,
        }),
      );
      expect(admin.ok && admin.entries.map((e) => e.answer).sort()).toEqual([
        "Garamond",
        "written without question text",
      ]);
    });
  });
});

describe("upgrading from the release before the source system's column names (0005)", () => {
  it("renames owner_id and question in place and reads every row back intact", async () => {
    const db = await fresh();
    await migrateBefore(db, "source_names");
    const ws = await createWorkspaceOnOldSchema(db.owner.client);
    await db.owner.client`
      insert into working_profile_answers
        (organization_id, owner_id, question_id, question, answer, version, created_at, updated_at)
      values (${ws.organizationId}, ${ws.member.userId}, 'citation-style', 'Which citation style?',
              'OSCOLA.', 3, '2026-01-02T03:04:05Z', '2026-02-03T04:05:06Z'),
             (${ws.organizationId}, ${ws.member.userId}, 'legacy-id', null, 'Written long ago.', 1,
              '2025-12-01T00:00:00Z', '2025-12-01T00:00:00Z')`;

    await installFresh(db);

    const columns = await db.owner.client`
      select column_name from information_schema.columns
      where table_name = 'working_profile_answers' order by ordinal_position`;
    expect(columns.map((c) => c.column_name)).toEqual([
      "organization_id",
      "owner_user_id",
      "question_id",
      "answer",
      "version",
      "created_at",
      "updated_at",
      "question_text",
    ]);
    const rows = await withTenant(db.app.db, ws.member, (tx) =>
      readProfile(tx, { owner: ws.member }),
    );
    expect(
      rows.map((r) => ({
        id: r.questionId,
        question: r.question,
        answer: r.answer,
        version: r.answerVersion,
        created: r.createdAt.toISOString(),
        updated: r.updatedAt.toISOString(),
      })),
    ).toEqual([
      {
        id: "legacy-id",
        question: LEGACY_QUESTION_LABEL,
        answer: "Written long ago.",
        version: 1,
        created: "2025-12-01T00:00:00.000Z",
        updated: "2025-12-01T00:00:00.000Z",
      },
      {
        id: "citation-style",
        question: "Which citation style?",
        answer: "OSCOLA.",
        version: 3,
        created: "2026-01-02T03:04:05.000Z",
        updated: "2026-02-03T04:05:06.000Z",
      },
    ]);
    const policies = await db.owner.client`
      select qual, with_check from pg_policies where tablename = 'working_profile_answers'`;
    for (const p of policies) {
      expect(`${p.qual ?? ""} ${p.with_check ?? ""}`).toContain("owner_user_id");
    }
  });
});
