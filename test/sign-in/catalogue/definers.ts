// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
import type { Check, Entry } from "../../../scripts/acceptance-mutations.ts";

/**
 * Issue 21, point 9 (decision 031): no definer function the app role may run crosses
 * organisations; those that must belong to the maintenance role.
 */
const ATTACK = "test/security/definer-functions.test.ts";
const RULE = "packages/db/src/definer-functions.integration.test.ts";

/** The suites of this concern whose every check needs an entry below. */
export const SUITES: readonly string[] = [ATTACK, RULE];

/** Definer functions live beside their domains' stores: entries find them anywhere. */
const DEFINERS = undefined;
const SERVE = "apps/mcp-server/src/cli/serve.ts";
const PROVISIONING = "packages/db/src/provision.ts";

const attack = (title: string): Check => ({
  file: ATTACK,
  name: `the app login cannot run the cross-organisation maintenance functions ${title}`,
});
const serving = (title: string): Check => ({
  file: ATTACK,
  name: `north serve runs the maintenance jobs on the maintenance login only ${title}`,
});
const rule = (title: string): Check => ({
  file: RULE,
  name: `definer function classes (decision 031) ${title}`,
});

/** Hands one cross-organisation function back to `app_role`, as it was before decision 031. */
const backToAppRole = (constant: string) => ({
  file: DEFINERS,
  find: `  name: ${constant},\n  grantee: MAINTENANCE_ROLE,\n`,
  replace: `  name: ${constant},\n`,
});

export const MUTATIONS: readonly Entry[] = [
  {
    check: attack("reads no organisation's memory bodies through memories_to_embed"),
    mutation: {
      ...backToAppRole("TO_EMBED_FUNCTION"),
      why: "let the app role run the backfill's work list again (every organisation's bodies)",
    },
  },
  {
    check: attack("writes no organisation's memory through set_memory_embedding"),
    mutation: {
      ...backToAppRole("SET_EMBEDDING_FUNCTION"),
      why: "let the app role store a vector on any organisation's memory by id",
    },
  },
  {
    check: attack("purges no organisation's expired memories through purge_expired_memories"),
    mutation: {
      ...backToAppRole("PURGE_FUNCTION"),
      why: "let the app role run the all-organisation purge again",
    },
  },
  {
    check: attack(
      "builds no index on every organisation's memories through ensure_memory_vector_index",
    ),
    mutation: {
      ...backToAppRole("ENSURE_VECTOR_INDEX_FUNCTION"),
      why: "let the app role ask for the shared vector index",
    },
  },
  {
    check: serving("purges expired memories through DATABASE_MAINTENANCE_URL"),
    mutation: {
      file: SERVE,
      find: "embedder, logger);\n  const stopPurge = startPurgeTimer(config, runtime.maintenance?.db, logger);",
      replace:
        "embedder, logger);\n  const stopPurge = startPurgeTimer(config, runtime.app.db, logger);",
      why: "run the periodic purge on the app pool, as before decision 031",
    },
  },
  {
    check: serving(
      "still serves without DATABASE_MAINTENANCE_URL, saying once that the purge is off",
    ),
    mutation: {
      file: SERVE,
      find: "  if (off.length === 0) return;",
      replace: "  if (off.length >= 0) return;",
      why: "turn the background jobs off without a word",
    },
  },
  {
    check: serving(
      "refuses to start when DATABASE_MAINTENANCE_URL's role may not run the maintenance functions",
    ),
    mutation: {
      file: "apps/mcp-server/src/cli/runtime.ts",
      find: "  if (role?.may) return;",
      replace: "  if (role) return;",
      why: "accept any maintenance URL, so a wrong one only fails every round in the log",
    },
  },
  {
    check: rule(
      "lets app_role execute only tenant-scoped definer functions and the named pre-tenant lookups",
    ),
    mutation: {
      file: PROVISIONING,
      find: "GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}`",
      replace: "GRANT EXECUTE ON FUNCTION ${qualified} TO app_role, ${fn.grantee}`",
      why: "grant every definer function to app_role as well as to its grantee",
    },
  },
  {
    check: rule("refuses memories_to_embed to the app login with 42501"),
    mutation: {
      file: PROVISIONING,
      find: '        [login, "app_role", ["forma", MAINTENANCE_ROLE]],\n',
      replace: '        [login, "app_role", ["forma"]],\n        [login, MAINTENANCE_ROLE, []],\n',
      why: "make the app login a member of the maintenance role (PostgreSQL 15 cannot fence it)",
    },
  },
  {
    check: rule("runs every cross-organisation function for the maintenance login"),
    mutation: {
      file: PROVISIONING,
      find: '        [maintenanceLogin, MAINTENANCE_ROLE, ["forma", "app_role"]],\n',
      replace: '        [maintenanceLogin, "app_role", ["forma"]],\n',
      why: "give the maintenance login the app role instead of the maintenance role",
    },
  },
  {
    check: rule("gives the maintenance role those functions and nothing else"),
    mutation: {
      file: PROVISIONING,
      find: "GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}`",
      replace: "GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}, ${MAINTENANCE_ROLE}`",
      why: "grant the maintenance role every definer function, the tenant-scoped ones included",
    },
  },
  {
    check: rule("keeps the maintenance role locked down and out of the app login's reach"),
    mutation: {
      file: PROVISIONING,
      find: "ALTER ROLE ${MAINTENANCE_ROLE} NOLOGIN NOINHERIT ${locked}",
      replace: "ALTER ROLE ${MAINTENANCE_ROLE} NOLOGIN NOINHERIT BYPASSRLS",
      why: "give the maintenance role BYPASSRLS",
    },
  },
  {
    check: {
      file: ATTACK,
      name: "the app login cannot list members through the sign-in lookups reads no member's email through active_member_for_user, for every user id it can list",
    },
    mutation: {
      file: DEFINERS,
      find: "    SELECT m.organization_id, m.role\n    FROM public.members m\n    WHERE m.user_id = p_user_id AND m.removed_at IS NULL;",
      replace:
        "    SELECT m.organization_id, m.role || ' ' || m.email\n    FROM public.members m\n    WHERE m.user_id = p_user_id AND m.removed_at IS NULL;",
      why: "the pre-tenant member lookup hands back the member's email again",
    },
  },
];
