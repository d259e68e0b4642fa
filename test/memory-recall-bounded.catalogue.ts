/**
 * The acceptance-mutation catalogue of memory-recall-bounded.test.ts: for each check listed, the
 * careless change to product code that turns it red (docs/acceptance.md; scripts/try-mutations.ts
 * tries them). Its older checks predate the catalogue and are covered by memory.acceptance's.
 */
import type { Entry } from "./support/catalogue.ts";

export const SUITE = "test/memory-recall-bounded.test.ts";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "full-text recall under row-level security looks up a word only a matter's memories hold in the index, firm-wide and in the matter",
    },
    mutation: {
      file: "drizzle/0023_scope_tagged_search.sql",
      find: "public.north_tenant_lexemes(coalesce(matter_id, organization_id),",
      replace: "public.north_tenant_lexemes(organization_id,",
      why: "a matter's memories carry the organisation's tag, so a word only a matter holds looks common firm-wide and recall walks the whole organisation",
    },
  },
];
