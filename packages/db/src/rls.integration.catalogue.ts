// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of rls.integration.test.ts: for each of its checks, the careless
 * change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts tries them).
 */
import type { Entry } from "../../../test/support/catalogue.ts";

export const SUITE = "packages/db/src/rls.integration.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role 'working_profile_answers' × 'select' × 'same-org user' → +0",
    },
    mutation: {
      file: "drizzle/0005_source_names.sql",
      find: "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_user_id = nullif(current_setting('north.user_id', true), '')::uuid);",
      replace:
        "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid);",
      why: "remove `owner_id = current user` from the profile's select policy",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role 'memories' × 'insert' × 'same-org user' → 'denied'",
    },
    mutation: {
      // 0022 redefined the policy 0004 created: the migration that has the last word.
      file: "drizzle/0022_matters.sql",
      find: "ALTER POLICY \"memories_tenant_insert\" ON \"memories\" TO app_role WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and author_id = nullif(current_setting('north.user_id', true), '')::uuid and",
      replace:
        "ALTER POLICY \"memories_tenant_insert\" ON \"memories\" TO app_role WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and",
      why: "memories may be written in a colleague's name",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role 'audit_events' × 'insert' × 'other org' → 'denied'",
    },
    mutation: {
      file: "drizzle/0001_initial.sql",
      find: "WITH CHECK (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and actor_id is not distinct from nullif(current_setting('north.user_id', true), '')::uuid);",
      replace: "WITH CHECK (true);",
      why: "the ledger accepts rows for any organization and actor",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role 'working_profile_answers' × 'delete' × 'own' → 'denied'",
    },
    mutation: {
      in: "TABLE_GRANTS",
      find: 'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",',
      replace:
        'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at), DELETE",',
      why: "grant DELETE on profile rows (without a policy it deletes nothing instead of being refused)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role refuses an update that moves an own row to another organization",
    },
    mutation: {
      in: "TABLE_GRANTS",
      find: 'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",',
      replace: 'privileges: "SELECT, INSERT, UPDATE",',
      why: "grant UPDATE on every column, keys included (policies still refuse, but later)",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role refuses an update that hands an own row to another owner",
    },
    mutation: {
      in: "TABLE_GRANTS",
      find: 'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",',
      replace:
        'privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at, owner_user_id)",',
      why: "add owner_user_id to the columns app_role may update",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role reads nothing from working_profile_answers without tenant context",
    },
    mutation: {
      in: "provisionDatabase",
      find: "await sql.unsafe(`ALTER TABLE ${name} ENABLE ROW LEVEL SECURITY`);",
      replace: "await sql.unsafe(`ALTER TABLE ${name} DISABLE ROW LEVEL SECURITY`);",
      why: "provisioning leaves row-level security off",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role reads nothing after a tenant transaction on the same pooled connection has ended",
    },
    mutation: {
      file: "drizzle/0005_source_names.sql",
      find: "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and owner_user_id = nullif(current_setting('north.user_id', true), '')::uuid);",
      replace:
        "\"working_profile_answers_owner_select\" ON \"working_profile_answers\" TO app_role USING (organization_id = current_setting('north.organization_id', true)::uuid and owner_user_id = current_setting('north.user_id', true)::uuid);",
      why: "cast the tenant settings without nullif: the '' an ended transaction leaves breaks the read",
    },
  },
  {
    check: {
      file: SUITE,
      name: "row-level security matrix for the app login role refuses an update that hands an own session to another member",
    },
    mutation: {
      in: "TABLE_GRANTS",
      find: '{ table: adminSessions, privileges: "SELECT, INSERT, UPDATE (ended_at)" },',
      replace: '{ table: adminSessions, privileges: "SELECT, INSERT, UPDATE" },',
      why: "grant UPDATE on every column of the sessions table",
    },
  },
];
