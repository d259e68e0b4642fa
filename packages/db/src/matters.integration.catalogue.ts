// biome-ignore-all lint/suspicious/noTemplateCurlyInString: entries quote source code, whose `${…}` must stay literal.
/**
 * The acceptance-mutation catalogue of matters.integration.test.ts (SPEC §5a in PostgreSQL): for
 * each check, the careless change to the may-see rule, the policies or a legal hold that turns
 * it red (docs/acceptance.md).
 */
import type { Entry } from "../../../test/support/catalogue.ts";

export const SUITE = "packages/db/src/matters.integration.test.ts";
const VISIBILITY = "drizzle/0021_matter_visibility.sql";
const POLICIES = "drizzle/0022_matters.sql";
const RULE = "the may-see rule in PostgreSQL, as the app role";
const HOLD = "a legal hold, in PostgreSQL";

const IGNORE_SCREENS = {
  file: VISIBILITY,
  find: "SELECT 1 FROM public.matter_screens s WHERE s.matter_id = mt.id AND s.user_id = v_user_id)",
  replace: "SELECT 1 FROM public.matter_screens s WHERE s.matter_id = mt.id AND false)",
  why: "the may-see rule ignores screens: a screened member (or manager) sees the matter",
};

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: `${RULE} a plain member reads the firm-wide and open matters' memories, nothing of a restricted one`,
    },
    mutation: {
      file: VISIBILITY,
      find: "AND (mt.access = 'open' OR EXISTS (",
      replace: "AND (mt.access IN ('open', 'restricted') OR EXISTS (",
      why: "a restricted matter is visible to every member, as an open one is",
    },
  },
  {
    check: { file: SUITE, name: `${RULE} the restricted matter's team reads its memories` },
    mutation: {
      file: VISIBILITY,
      find: "AND (mt.access = 'open' OR EXISTS (",
      replace: "AND (mt.access = 'open' OR NOT EXISTS (",
      why: "a restricted matter is visible to those off its team, not to those on it",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${RULE} a screened member reads nothing of the matter they are screened from`,
    },
    mutation: IGNORE_SCREENS,
  },
  {
    check: { file: SUITE, name: `${RULE} a screen wins over the team and the manager role` },
    mutation: IGNORE_SCREENS,
  },
  {
    check: { file: SUITE, name: `${RULE} another organisation reads none of it` },
    mutation: {
      file: POLICIES,
      find: `ALTER POLICY "memories_tenant_select" ON "memories" TO app_role USING (organization_id = nullif(current_setting('north.organization_id', true), '')::uuid and`,
      replace: `ALTER POLICY "memories_tenant_select" ON "memories" TO app_role USING (true and`,
      why: "the select policy of memories forgets the organisation",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${RULE} the full-text candidate function gives a screened or off-team user nothing of the matter, even when named`,
    },
    mutation: {
      in: "VISIBLE_MATTER",
      find: "v_matter uuid := CASE WHEN p_matter IS NULL THEN NULL WHEN p_matter = ANY (public.north_visible_matters()) THEN p_matter END;",
      replace: "v_matter uuid := p_matter;",
      why: "the recall candidates trust the named matter without the may-see rule",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${RULE} refuses to write a memory into a matter the user may not see`,
    },
    mutation: {
      file: POLICIES,
      find: `author_id = nullif(current_setting('north.user_id', true), '')::uuid and (matter_id IS NULL OR`,
      replace: `author_id = nullif(current_setting('north.user_id', true), '')::uuid and (true OR`,
      why: "the insert policy of memories lets anyone write into any matter",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${RULE} erases nothing of a matter the user may not see, manager or not`,
    },
    mutation: IGNORE_SCREENS,
  },
  {
    check: {
      file: SUITE,
      name: `${RULE} counts a subject's memories in matters the user may not see, and reads none of them`,
    },
    mutation: {
      file: "packages/db/src/matters.ts",
      find: "AND NOT (m.matter_id = ANY (public.north_visible_matters()));",
      replace: "AND false;",
      why: "held's withheld count always says nothing is withheld",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${HOLD} keeps a held matter's memories live past their expiry, out of the purge and out of erasure`,
    },
    mutation: {
      in: "purgeMemoriesDefiner",
      find: 'AND NOT ${IN_HOLD_ANY_ORGANIZATION("m")}',
      replace: "",
      why: "the purge takes the bodies of a held matter's expired memories",
    },
  },
  {
    check: {
      file: SUITE,
      name: `${HOLD} after release, expiry applies again and the next purge takes what expired meanwhile`,
    },
    mutation: {
      in: "releaseMatter",
      find: ".where(and(eq(matters.id, params.matterId), isNotNull(matters.heldSince)))",
      replace: ".where(and(eq(matters.id, params.matterId), isNull(matters.heldSince)))",
      why: "release looks for a matter that is not held, and releases nothing",
    },
  },
];

export const SUITES = [SUITE];
