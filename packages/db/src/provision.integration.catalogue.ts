// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of provision.integration.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "../../../test/support/catalogue.ts";

export const SUITE = "packages/db/src/provision.integration.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "the app login role is not superuser, has no BYPASSRLS, and is a member of app_role only",
    },
    mutation: {
      in: "provisionDatabase",
      find: "await sql.unsafe(`ALTER ROLE ${login} LOGIN INHERIT ${locked}`);",
      replace: "await sql.unsafe(`ALTER ROLE ${login} LOGIN INHERIT BYPASSRLS`);",
      why: "give the login role BYPASSRLS (the admin screen's shortcut)",
    },
  },
  {
    check: { file: SUITE, name: "the app login role owns nothing in the database" },
    mutation: {
      in: "provisionDatabase",
      find: "await sql.unsafe(`ALTER TABLE ${name} OWNER TO forma`);",
      replace: "await sql.unsafe(`ALTER TABLE ${name} OWNER TO ${login}`);",
      why: "hand the tables to the login role",
    },
  },
  {
    check: { file: SUITE, name: "the app login role cannot SET ROLE forma" },
    mutation: {
      in: "provisionDatabase",
      find: 'await sql.unsafe("GRANT USAGE ON SCHEMA public TO app_role");',
      replace:
        'await sql.unsafe("GRANT USAGE ON SCHEMA public TO app_role");\n      await sql.unsafe("GRANT forma TO app_role");',
      why: "make app_role a member of forma (the login role then reaches it through app_role)",
    },
  },
  {
    check: { file: SUITE, name: "the app login role may only insert into the audit table" },
    mutation: {
      in: "TABLE_GRANTS",
      find: '{ table: auditEvents, privileges: "INSERT" },',
      replace: '{ table: auditEvents, privileges: "SELECT, INSERT" },',
      why: "let the app role read the ledger",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin is SECURITY DEFINER, owned by forma, with a pinned search_path",
    },
    mutation: {
      file: "packages/db/src/definer.ts",
      find: "SET search_path = pg_catalog, pg_temp$",
      replace: "SET search_path = public, pg_catalog, pg_temp$",
      why: "put public on the definer functions' search_path",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin resolve_api_token grants EXECUTE to app_role and not to PUBLIC, and is owned by forma",
    },
    mutation: {
      file: "packages/db/src/provision.ts",
      find: "        await sql.unsafe(`REVOKE ALL ON FUNCTION ${qualified} FROM PUBLIC`);\n",
      replace: "",
      why: "forget to revoke EXECUTE from PUBLIC on the definer functions",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin shows a manager every member of their organization and nothing of another (case 19)",
    },
    mutation: {
      find: "    WHERE a.organization_id = p_organization_id\n    ORDER BY m.email",
      replace: "    ORDER BY m.email",
      why: "drop the organization filter from the admin function",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin refuses an ordinary member, and the transaction carries on",
    },
    mutation: {
      in: "callManagerOnly",
      find: "return await tx.transaction(async (inner) => [...(await inner.execute<Row>(call))] as Row[]);",
      replace: "return [...(await tx.execute<Row>(call))] as Row[];",
      why: "call the manager-only function without a savepoint: its refusal aborts the caller's transaction",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin gives a manager the organization's audit events and refuses an ordinary member",
    },
    mutation: {
      find: "      AND m.role = 'manager'\n      AND m.removed_at IS NULL\n  ) THEN",
      replace: "      AND m.removed_at IS NULL\n  ) THEN",
      why: "drop the manager check from the manager-only functions",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin refuses a requester who is not the transaction's tenant",
    },
    mutation: {
      find: "\n     OR p_requester_id IS DISTINCT FROM nullif(current_setting('north.user_id', true), '')::uuid THEN",
      replace: " THEN",
      why: "the manager-only guard no longer ties the requester to the transaction's user",
    },
  },
  {
    check: {
      file: SUITE,
      name: "working_profile_answers_for_admin ignores temporary tables that shadow the names it uses",
    },
    mutation: {
      find: "    SELECT 1 FROM public.members m\n    WHERE m.organization_id = p_organization_id\n",
      replace: "    SELECT 1 FROM members m\n    WHERE m.organization_id = p_organization_id\n",
      why: "drop the `public.` qualifier from the manager check",
    },
  },
  {
    check: {
      file: SUITE,
      name: "legacy rows and size (case 15) reads null question text with bank wording or the legacy label, and 101 rows in full",
    },
    mutation: {
      find: "    ORDER BY m.email, a.created_at, a.question_id;\n",
      replace: "    ORDER BY m.email, a.created_at, a.question_id\n    LIMIT 100;\n",
      why: "put a LIMIT in the admin function",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) creates the function on a fresh install, and a rerun changes nothing",
    },
    mutation: {
      file: "packages/db/src/provision.ts",
      find: "        for (const { signature } of overloads) await sql.unsafe(`DROP FUNCTION ${signature}`);\n",
      replace: "",
      why: "re-create the functions without dropping the old definitions: a rerun fails",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) lets four concurrent runs all succeed with the same result",
    },
    mutation: {
      file: "packages/db/src/provision.ts",
      find: "      await sql`select pg_advisory_xact_lock(${PROVISION_LOCK_KEY})`;\n",
      replace: "",
      why: "provision without the advisory lock",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) lets two concurrent migrations both succeed and apply each migration once",
    },
    mutation: {
      file: "packages/db/src/migrate.ts",
      find: "    await client`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;\n",
      replace: "",
      why: "migrate without the advisory lock",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) upgrading a database from before question text was recorded refuses to drop a function something depends on, and changes nothing",
    },
    mutation: {
      in: "provisionDatabase",
      find: "await sql.unsafe(`DROP FUNCTION ${signature}`);",
      replace: "await sql.unsafe(`DROP FUNCTION ${signature} CASCADE`);",
      why: "`DROP FUNCTION … CASCADE`",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) upgrading a database from before question text was recorded replaces the old definition with owner, search_path, revoke and grant restored",
    },
    mutation: {
      file: "packages/db/src/provision.ts",
      find: "        await sql.unsafe(`ALTER FUNCTION ${qualified} OWNER TO forma`);\n",
      replace: "",
      why: "re-create the functions without handing them back to forma",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) upgrading a database from before question text was recorded carries old rows across and keeps accepting old-shape inserts, read with the fallback",
    },
    mutation: {
      file: "drizzle/0002_question_text.sql",
      find: 'ADD COLUMN "question" text;',
      replace: "ADD COLUMN \"question\" text NOT NULL DEFAULT 'Question';",
      why: "backfill question text with a placeholder and require it",
    },
  },
  {
    check: {
      file: SUITE,
      name: "provisioning (case 18) upgrading a database from before question text was recorded still answers an old explicit-column read of the admin function after the upgrade",
    },
    mutation: {
      find: "  owner_email text,\n  question_id text,\n",
      replace: "  owner_email text,\n  profile_question_id text,\n",
      why: "rename a column of the admin function's result",
    },
  },
  {
    check: {
      file: SUITE,
      name: "upgrading from the release before the source system's column names (0005) renames owner_id and question in place and reads every row back intact",
    },
    mutation: {
      file: "drizzle/0005_source_names.sql",
      find: 'ALTER TABLE "working_profile_answers" RENAME COLUMN "question" TO "question_text";',
      replace: 'ALTER TABLE "working_profile_answers" ADD COLUMN "question_text" text;',
      why: "answer drizzle-kit's prompt with create, not rename: the question text is lost",
    },
  },
];
