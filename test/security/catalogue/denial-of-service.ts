/**
 * The acceptance-mutation catalogue's entries for the checks of denial-of-service.test.ts added
 * with migration 0024 (the search functions' attack review): for each, the product change that
 * turns it red. The suite's older checks predate the catalogue. Gathered in
 * scripts/acceptance-mutations.ts.
 */
import type { Entry } from "../../support/catalogue.ts";

export const SUITE = "test/security/denial-of-service.test.ts";
const MIGRATION = "drizzle/0024_bounded_search_terms.sql";

export const MUTATIONS: readonly Entry[] = [
  {
    check: {
      file: SUITE,
      name: "one caller cannot hold the pool for everyone plans a query that repeats its words as the words once, in their first order",
    },
    mutation: {
      file: MIGRATION,
      find: "SELECT DISTINCT ON (w.alternatives) w.n, w.alternatives",
      replace: "SELECT w.n, w.alternatives",
      why: "every repetition of a word is its own ANDed term again",
    },
  },
  {
    check: {
      file: SUITE,
      name: "one caller cannot hold the pool for everyone stores and recalls a memory holding a word too long to index, instead of an internal error",
    },
    mutation: {
      file: MIGRATION,
      find: "WHERE octet_length(public.north_tenant_prefix($1)) + octet_length(v.lexeme) <= 2046;",
      replace: "WHERE true;",
      why: "a lexeme too long once tagged goes into the tsvector, which refuses it",
    },
  },
];
