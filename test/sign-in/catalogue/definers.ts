// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * Issue 21, point 9 (decision 031): no definer function the app role may run crosses
 * organisations; those that must belong to the maintenance role.
 */
import type { Entry } from "../../support/catalogue.ts";

const SUITE_1 = "test/security/definer-functions.test.ts";
const SUITE_2 = "packages/db/src/definer-functions.integration.test.ts";

export const SUITES = [SUITE_1, SUITE_2];

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE_1,
      name: "the app login cannot run the cross-organisation maintenance functions reads no organisation's memory bodies through memories_to_embed",
    },
    mutation: {
      find: "  name: TO_EMBED_FUNCTION,\n  grantee: MAINTENANCE_ROLE,\n",
      replace: "  name: TO_EMBED_FUNCTION,\n",
      why: "let the app role run the backfill's work list again (every organisation's bodies)",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the app login cannot run the cross-organisation maintenance functions writes no organisation's memory through set_memory_embedding",
    },
    mutation: {
      find: "  name: SET_EMBEDDING_FUNCTION,\n  grantee: MAINTENANCE_ROLE,\n",
      replace: "  name: SET_EMBEDDING_FUNCTION,\n",
      why: "let the app role store a vector on any organisation's memory by id",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the app login cannot run the cross-organisation maintenance functions purges no organisation's expired memories through purge_expired_memories",
    },
    mutation: {
      find: "  name: PURGE_FUNCTION,\n  grantee: MAINTENANCE_ROLE,\n",
      replace: "  name: PURGE_FUNCTION,\n",
      why: "let the app role run the all-organisation purge again",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the app login cannot run the cross-organisation maintenance functions builds no index on every organisation's memories through ensure_memory_vector_index",
    },
    mutation: {
      find: "  name: ENSURE_VECTOR_INDEX_FUNCTION,\n  grantee: MAINTENANCE_ROLE,\n",
      replace: "  name: ENSURE_VECTOR_INDEX_FUNCTION,\n",
      why: "let the app role ask for the shared vector index",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "north serve runs the maintenance jobs on the maintenance login only purges expired memories through DATABASE_MAINTENANCE_URL",
    },
    mutation: {
      in: "serveHttp",
      find: "embedder, logger); const stopPurge = startPurgeTimer(config, runtime.maintenance?.db, logger);",
      replace:
        "embedder, logger);\n  const stopPurge = startPurgeTimer(config, runtime.app.db, logger);",
      why: "run the periodic purge on the app pool, as before decision 031",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "north serve runs the maintenance jobs on the maintenance login only still serves without DATABASE_MAINTENANCE_URL, saying once that the purge is off",
    },
    mutation: {
      in: "warnMaintenanceOff",
      find: "  if (off.length === 0) return;",
      replace: "  if (off.length >= 0) return;",
      why: "turn the background jobs off without a word",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "north serve runs the maintenance jobs on the maintenance login only refuses to start when DATABASE_MAINTENANCE_URL's role may not run the maintenance functions",
    },
    mutation: {
      in: "refuseUnfitMaintenanceRole",
      find: "  if (role?.may) return;",
      replace: "  if (role) return;",
      why: "accept any maintenance URL, so a wrong one only fails every round in the log",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "definer function classes (decision 031) lets app_role execute only tenant-scoped definer functions and the named pre-tenant lookups",
    },
    mutation: {
      in: "provisionDatabase",
      find: "GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}`",
      replace: "GRANT EXECUTE ON FUNCTION ${qualified} TO app_role, ${fn.grantee}`",
      why: "grant every definer function to app_role as well as to its grantee",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "definer function classes (decision 031) refuses memories_to_embed to the app login with 42501",
    },
    mutation: {
      file: "packages/db/src/provision.ts",
      find: '        [login, "app_role", ["forma", MAINTENANCE_ROLE]],\n',
      replace: '        [login, "app_role", ["forma"]],\n        [login, MAINTENANCE_ROLE, []],\n',
      why: "make the app login a member of the maintenance role (PostgreSQL 15 cannot fence it)",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "definer function classes (decision 031) runs every cross-organisation function for the maintenance login",
    },
    mutation: {
      file: "packages/db/src/provision.ts",
      find: '        [maintenanceLogin, MAINTENANCE_ROLE, ["forma", "app_role"]],\n',
      replace: '        [maintenanceLogin, "app_role", ["forma"]],\n',
      why: "give the maintenance login the app role instead of the maintenance role",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "definer function classes (decision 031) gives the maintenance role those functions and nothing else",
    },
    mutation: {
      in: "provisionDatabase",
      find: "GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}`",
      replace: "GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}, ${MAINTENANCE_ROLE}`",
      why: "grant the maintenance role every definer function, the tenant-scoped ones included",
    },
  },
  {
    check: {
      file: SUITE_2,
      name: "definer function classes (decision 031) keeps the maintenance role locked down and out of the app login's reach",
    },
    mutation: {
      in: "provisionDatabase",
      find: "ALTER ROLE ${MAINTENANCE_ROLE} NOLOGIN NOINHERIT ${locked}",
      replace: "ALTER ROLE ${MAINTENANCE_ROLE} NOLOGIN NOINHERIT BYPASSRLS",
      why: "give the maintenance role BYPASSRLS",
    },
  },
  {
    check: {
      file: SUITE_1,
      name: "the app login cannot list members through the sign-in lookups reads no member's email through active_member_for_user, for every user id it can list",
    },
    mutation: {
      find: "    SELECT m.organization_id, m.role\n    FROM public.members m\n    WHERE m.user_id = p_user_id AND m.removed_at IS NULL;",
      replace:
        "    SELECT m.organization_id, m.role || ' ' || m.email\n    FROM public.members m\n    WHERE m.user_id = p_user_id AND m.removed_at IS NULL;",
      why: "the pre-tenant member lookup hands back the member's email again",
    },
  },
];
